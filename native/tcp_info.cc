// getsockopt(TCP_INFO) on its own: <linux/tcp.h> has the full struct tcp_info (glibc's
// <netinet/tcp.h> stops at tcpi_total_retrans), and the two headers cannot be in one translation
// unit with libuv's, which includes the glibc one.
#include "tcp_info.h"

#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int h2lab_tcp_info(int fd, H2labTcpField* out, int max, char* cc, size_t ccLen) {
  struct tcp_info ti;
  memset(&ti, 0, sizeof ti);
  socklen_t len = sizeof ti;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0) return -errno;
  // The kernel copies min(its struct, ours) and says how much: a field past `len` is one this
  // kernel does not have, so it is left out rather than reported as 0.
  const size_t have = len;
  int n = 0;
#define TCPI(field)                                                                          \
  if (n < max && have >= offsetof(struct tcp_info, tcpi_##field) + sizeof ti.tcpi_##field) { \
    out[n].name = #field;                                                                    \
    out[n].value = static_cast<double>(ti.tcpi_##field);                                     \
    n++;                                                                                     \
  }
  TCPI(state)
  TCPI(ca_state)
  TCPI(retransmits)
  TCPI(probes)
  TCPI(backoff)
  TCPI(rto)
  TCPI(snd_mss)
  TCPI(rcv_mss)
  TCPI(unacked)
  TCPI(sacked)
  TCPI(lost)
  TCPI(retrans)
  TCPI(pmtu)
  TCPI(rtt)
  TCPI(rttvar)
  TCPI(snd_ssthresh)
  TCPI(snd_cwnd)
  TCPI(reordering)
  TCPI(rcv_rtt)
  TCPI(rcv_space)
  TCPI(total_retrans)
  TCPI(pacing_rate)
  TCPI(bytes_acked)
  TCPI(bytes_received)
  TCPI(segs_out)
  TCPI(segs_in)
  TCPI(notsent_bytes)
  TCPI(min_rtt)
  TCPI(data_segs_in)
  TCPI(data_segs_out)
  TCPI(delivery_rate)
  TCPI(busy_time)
  TCPI(rwnd_limited)
  TCPI(sndbuf_limited)
  TCPI(delivered)
  TCPI(bytes_sent)
  TCPI(bytes_retrans)
  TCPI(dsack_dups)
  TCPI(reord_seen)
  TCPI(rcv_ooopack)
  TCPI(snd_wnd)
#undef TCPI
  if (cc != nullptr && ccLen > 1) {
    socklen_t l = static_cast<socklen_t>(ccLen - 1);
    memset(cc, 0, ccLen);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &l) < 0) cc[0] = 0;
  }
  return n;
}
