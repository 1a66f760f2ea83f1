"""Views: what readers look at. They read results, snapshots and traces; workers never import them."""
