ttl_hours = 31  # longer than the 30 h delay: a TTL of exactly 30 h has expired when it comes

lesson2.shortest_ttl.check(ttl_hours)
