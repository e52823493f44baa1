{
  "targets": [
    {
      "target_name": "h2lab_net",
      "sources": ["h2lab_net.cc", "tcp_info.cc"],
      "cflags_cc": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
