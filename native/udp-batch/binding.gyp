{
  "targets": [
    {
      "target_name": "udp_batch",
      "sources": ["udp_batch.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "conditions": [["OS!='linux'", {"type": "none"}]]
    }
  ]
}
