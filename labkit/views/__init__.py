"""Views: what readers look at. They read results, snapshots and traces.

Workers never import anything from here.
"""
