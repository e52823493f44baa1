// h2lab_net: the device and fd plumbing of h2lab's packet relay, and one socket query.
//
// Node cannot issue ioctl(TUNSETIFF) and refuses a TUN fd as a socket, and reading one through the
// libuv threadpool tops out near 190 Mbit/s. So this addon does exactly four things natively:
//   1. open a TUN device (IFF_TUN | IFF_NO_PI, no offloads: one IP packet per read/write);
//   2. readiness: watch an fd with a uv_poll handle on Node's own loop and call back into JS;
//   3. batched non-blocking read() of packets until EAGAIN, one write() per packet (a writev() into a
//      TUN is ONE packet: the rest would be silently lost);
//   4. timerfd with absolute CLOCK_MONOTONIC deadlines (setTimeout is 0.6-1.6 ms late; this is ~0.02).
// The link model (delay, loss, rate, queue) lives in TypeScript.
// Beside the relay, one read-only socket query: tcpInfo(fd), getsockopt(TCP_INFO) and TCP_CONGESTION,
// the kernel's own view of a connection (cwnd, RTT, retransmissions), which Node does not expose.
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <node_api.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "tcp_info.h"

#define CHECK(call)                                                         \
  do {                                                                      \
    if ((call) != napi_ok) {                                                \
      napi_throw_error(env, "H2LAB_ERR_INTERNAL", "N-API call failed: " #call); \
      return nullptr;                                                       \
    }                                                                       \
  } while (0)

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, message, error;
  napi_create_string_utf8(env, "ERRNO", NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  napi_value errnoValue;
  napi_create_int32(env, err, &errnoValue);
  napi_set_named_property(env, error, "errno", errnoValue);
  napi_throw(env, error);
  return nullptr;
}

static bool get_args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < want) {
    napi_throw_type_error(env, nullptr, "h2lab_net: wrong number of arguments");
    return false;
  }
  return true;
}

static int32_t get_i32(napi_env env, napi_value v) {
  int32_t out = -1;
  napi_get_value_int32(env, v, &out);
  return out;
}

// openTun(name) -> { fd, name }. name may be "" to let the kernel choose.
static napi_value OpenTun(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  char name[IFNAMSIZ] = {0};
  size_t len = 0;
  CHECK(napi_get_value_string_utf8(env, argv[0], name, sizeof name, &len));
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return throw_errno(env, "open /dev/net/tun", errno);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "ioctl TUNSETIFF", err);
  }
  napi_value result, fdValue, nameValue;
  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_int32(env, fd, &fdValue));
  CHECK(napi_create_string_utf8(env, ifr.ifr_name, NAPI_AUTO_LENGTH, &nameValue));
  CHECK(napi_set_named_property(env, result, "fd", fdValue));
  CHECK(napi_set_named_property(env, result, "name", nameValue));
  return result;
}

// readBatch(fd, slab, stride, lens: Int32Array) -> n packets read (0 when nothing was ready).
// Packet i is at slab[i*stride .. i*stride+lens[i]).
static napi_value ReadBatch(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!get_args(env, info, 4, argv)) return nullptr;
  int fd = get_i32(env, argv[0]);
  void* slab = nullptr;
  size_t slabLen = 0;
  CHECK(napi_get_buffer_info(env, argv[1], &slab, &slabLen));
  int32_t stride = get_i32(env, argv[2]);
  napi_typedarray_type type;
  size_t count = 0;
  void* lensData = nullptr;
  CHECK(napi_get_typedarray_info(env, argv[3], &type, &count, &lensData, nullptr, nullptr));
  if (type != napi_int32_array || stride <= 0) {
    napi_throw_type_error(env, nullptr, "readBatch: lens must be an Int32Array and stride > 0");
    return nullptr;
  }
  int32_t* lens = static_cast<int32_t*>(lensData);
  size_t max = slabLen / static_cast<size_t>(stride);
  if (count < max) max = count;
  size_t n = 0;
  while (n < max) {
    ssize_t r = read(fd, static_cast<char*>(slab) + n * stride, stride);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return throw_errno(env, "read", errno);
    }
    lens[n++] = static_cast<int32_t>(r);
  }
  napi_value out;
  CHECK(napi_create_uint32(env, static_cast<uint32_t>(n), &out));
  return out;
}

// writePacket(fd, buf, offset, len) -> bytes written, or -errno (the caller counts it as a drop).
static napi_value WritePacket(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!get_args(env, info, 4, argv)) return nullptr;
  int fd = get_i32(env, argv[0]);
  void* data = nullptr;
  size_t dataLen = 0;
  CHECK(napi_get_buffer_info(env, argv[1], &data, &dataLen));
  int32_t offset = get_i32(env, argv[2]);
  int32_t len = get_i32(env, argv[3]);
  if (offset < 0 || len < 0 || static_cast<size_t>(offset) + static_cast<size_t>(len) > dataLen) {
    napi_throw_range_error(env, nullptr, "writePacket: offset/len outside the buffer");
    return nullptr;
  }
  ssize_t r;
  do {
    r = write(fd, static_cast<char*>(data) + offset, len);
  } while (r < 0 && errno == EINTR);
  napi_value out;
  CHECK(napi_create_int32(env, r < 0 ? -errno : static_cast<int32_t>(r), &out));
  return out;
}

static napi_value TimerCreate(napi_env env, napi_callback_info) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) return throw_errno(env, "timerfd_create", errno);
  napi_value out;
  CHECK(napi_create_int32(env, fd, &out));
  return out;
}

// timerArm(fd, deadlineMs): absolute CLOCK_MONOTONIC deadline in ms (as nowMs()); <= 0 disarms.
static napi_value TimerArm(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return nullptr;
  int fd = get_i32(env, argv[0]);
  double ms = 0;
  CHECK(napi_get_value_double(env, argv[1], &ms));
  struct itimerspec spec;
  memset(&spec, 0, sizeof spec);
  if (ms > 0) {
    int64_t ns = static_cast<int64_t>(ms * 1e6);
    if (ns <= 0) ns = 1;
    spec.it_value.tv_sec = ns / 1000000000;
    spec.it_value.tv_nsec = ns % 1000000000;
  }
  if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, nullptr) < 0) return throw_errno(env, "timerfd_settime", errno);
  return nullptr;
}

static napi_value TimerAck(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  uint64_t expirations;
  ssize_t r = read(get_i32(env, argv[0]), &expirations, sizeof expirations);
  (void)r;  // EAGAIN when already drained: nothing to do.
  return nullptr;
}

static napi_value NowMs(napi_env env, napi_callback_info) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  napi_value out;
  CHECK(napi_create_double(env, ts.tv_sec * 1e3 + ts.tv_nsec / 1e6, &out));
  return out;
}

// nowInto(f64: Float64Array): writes CLOCK_MONOTONIC ms into f64[0]. Returns nothing, so reading the
// clock allocates nothing on the JS heap (nowMs() returns a new heap number per call, and the relay
// reads the clock per packet batch: that garbage triggered a scavenge every ~0.5 s at 100 Mbit/s).
static napi_value NowInto(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  napi_typedarray_type type;
  size_t count = 0;
  void* data = nullptr;
  CHECK(napi_get_typedarray_info(env, argv[0], &type, &count, &data, nullptr, nullptr));
  if (type != napi_float64_array || count < 1) {
    napi_throw_type_error(env, nullptr, "nowInto: a Float64Array of length >= 1");
    return nullptr;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  static_cast<double*>(data)[0] = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  return nullptr;
}

// spinUntil(deadlineMs): busy-waits until CLOCK_MONOTONIC reaches deadlineMs (as nowMs()), at most
// 1 ms. The relay wakes a little before a deadline after a long sleep and waits out the rest here:
// waking a halted vCPU is 0.03-0.2 ms late, and a spin in JS would allocate a heap number per clock read
// until the loop is optimised.
static napi_value SpinUntil(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  double deadline = 0;
  CHECK(napi_get_value_double(env, argv[0], &deadline));
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  const double limit = now + 1.0;
  if (deadline > limit) deadline = limit;
  while (now < deadline) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  }
  return nullptr;
}

static napi_value CloseFd(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  close(get_i32(env, argv[0]));
  return nullptr;
}

// tcpInfo(fd) -> { kernel field name without tcpi_: number, ..., congestion: string }.
// The reading itself is in tcp_info.cc (it needs <linux/tcp.h>, which clashes with libuv's headers).
static napi_value TcpInfo(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  H2labTcpField fields[H2LAB_TCP_FIELDS_MAX];
  char cc[16] = {0};
  int n = h2lab_tcp_info(get_i32(env, argv[0]), fields, H2LAB_TCP_FIELDS_MAX, cc, sizeof cc);
  if (n < 0) return throw_errno(env, "getsockopt TCP_INFO", -n);
  napi_value out, v;
  CHECK(napi_create_object(env, &out));
  for (int i = 0; i < n; i++) {
    CHECK(napi_create_double(env, fields[i].value, &v));
    CHECK(napi_set_named_property(env, out, fields[i].name, v));
  }
  if (cc[0] != 0) {
    CHECK(napi_create_string_utf8(env, cc, NAPI_AUTO_LENGTH, &v));
    CHECK(napi_set_named_property(env, out, "congestion", v));
  }
  return out;
}

// --- readiness: a uv_poll handle on Node's loop, calling a JS function when the fd is readable ---
struct Watch {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
  bool closing;
};

static void on_poll(uv_poll_t* handle, int status, int events) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (w->closing) return;
  napi_env env = w->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, arg;
  napi_get_reference_value(env, w->callback, &cb);
  // napi_make_callback converts the receiver to an object: undefined would throw.
  napi_get_global(env, &recv);
  napi_create_int32(env, status < 0 ? status : events, &arg);
  napi_value result;
  // napi_make_callback runs the microtask queue and process.nextTick afterwards, like any I/O callback.
  napi_status s = napi_make_callback(env, w->context, recv, cb, 1, &arg, &result);
  if (s == napi_pending_exception) {
    napi_value exc;
    napi_get_and_clear_last_exception(env, &exc);
    napi_fatal_exception(env, exc);
  }
  napi_close_handle_scope(env, scope);
}

static void on_close(uv_handle_t* handle) {
  delete static_cast<Watch*>(handle->data);
}

static void finalize_watch(napi_env, void*, void*) {}

// watch(fd, callback) -> handle. callback(events) is called whenever fd is readable.
static napi_value WatchFd(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return nullptr;
  int fd = get_i32(env, argv[0]);
  uv_loop_t* loop = nullptr;
  CHECK(napi_get_uv_event_loop(env, &loop));
  Watch* w = new Watch();
  w->env = env;
  w->closing = false;
  CHECK(napi_create_reference(env, argv[1], 1, &w->callback));
  napi_value name;
  CHECK(napi_create_string_utf8(env, "h2lab.net.watch", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_async_init(env, nullptr, name, &w->context));
  w->poll.data = w;
  int r = uv_poll_init(loop, &w->poll, fd);
  if (r == 0) r = uv_poll_start(&w->poll, UV_READABLE, on_poll);
  if (r != 0) {
    napi_delete_reference(env, w->callback);
    napi_async_destroy(env, w->context);
    delete w;
    return throw_errno(env, "uv_poll", -r);
  }
  napi_value handle;
  CHECK(napi_create_external(env, w, finalize_watch, nullptr, &handle));
  return handle;
}

// unwatch(handle): stop watching; the fd stays open (close it after).
static napi_value Unwatch(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return nullptr;
  void* data = nullptr;
  CHECK(napi_get_value_external(env, argv[0], &data));
  Watch* w = static_cast<Watch*>(data);
  if (w == nullptr || w->closing) return nullptr;
  w->closing = true;
  uv_poll_stop(&w->poll);
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->context);
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), on_close);
  return nullptr;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"openTun", nullptr, OpenTun, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"readBatch", nullptr, ReadBatch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"writePacket", nullptr, WritePacket, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"timerCreate", nullptr, TimerCreate, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"timerArm", nullptr, TimerArm, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"timerAck", nullptr, TimerAck, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"nowMs", nullptr, NowMs, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"nowInto", nullptr, NowInto, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"spinUntil", nullptr, SpinUntil, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"closeFd", nullptr, CloseFd, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"watch", nullptr, WatchFd, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"unwatch", nullptr, Unwatch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"tcpInfo", nullptr, TcpInfo, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
