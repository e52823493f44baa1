// The kernel's view of one TCP connection (getsockopt TCP_INFO), for h2lab_net.cc.
#pragma once
#include <stddef.h>

struct H2labTcpField {
  const char* name;  // the struct tcp_info field name without its tcpi_ prefix
  double value;
};

#define H2LAB_TCP_FIELDS_MAX 48

// Fills `out` with the fields the running kernel filled in and `cc` with the congestion control
// algorithm (empty when unknown). Returns the number of fields, or -errno.
int h2lab_tcp_info(int fd, H2labTcpField* out, int max, char* cc, size_t ccLen);
