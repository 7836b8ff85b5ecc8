// Batched UDP for the DNS server (Linux): a SO_REUSEPORT socket, or one a primary bound and its
// workers inherited (every worker reads it), read with recvmmsg
// when libuv says it is readable, one call into JavaScript per batch, the answers sent with one
// sendmmsg. See src/dns/udp-batch.ts for the JavaScript side and docs/dns.md for the design.
//
// Memory shared with JavaScript (Buffers it allocates and this addon keeps referenced):
//   rx      batch slots of SLOT bytes: the datagrams received
//   addrs   batch slots of ADDR bytes: each datagram's sender (a struct sockaddr_in or _in6)
//   lens    batch int32: each datagram's length
//   tx      batch slots of SLOT bytes: the answers JavaScript writes
//   txLens  batch int32: each answer's length (0: no answer now), sent to the same slot's sender
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#define SLOT 65536
#define ADDR 28
/** recvmmsg rounds per readiness before the loop gets its turn (TCP, timers, promises). */
#define MAX_ROUNDS 8

typedef struct Sock {
  int fd;
  int family;
  int closed;
  /** Freed when both are gone: the poll handle (closed) and the JavaScript handle (collected). */
  int poll_gone, js_gone;
  unsigned batch;
  uv_poll_t poll;
  napi_env env;
  napi_ref on_batch;
  napi_ref bufs[5];
  napi_async_context actx;
  uint8_t* rx;
  uint8_t* addrs;
  int32_t* lens;
  uint8_t* tx;
  int32_t* tx_lens;
  struct mmsghdr* in;
  struct iovec* in_iov;
  struct mmsghdr* out;
  struct iovec* out_iov;
  double received, sent, dropped, errors, batches;
} Sock;

#define CHECK(call)                   \
  do {                                \
    if ((call) != napi_ok) return NULL; \
  } while (0)

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, message, error;
  const char* name = err == EADDRINUSE ? "EADDRINUSE" : err == EADDRNOTAVAIL ? "EADDRNOTAVAIL" : err == EACCES ? "EACCES" : "EUDPBATCH";
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  napi_set_named_property(env, error, "code", code);
  napi_throw(env, error);
  return NULL;
}

static void free_sock(Sock* s) {
  free(s->in);
  free(s->in_iov);
  free(s->out);
  free(s->out_iov);
  free(s);
}

static void on_poll_closed(uv_handle_t* h) {
  Sock* s = (Sock*)h->data;
  close(s->fd);
  s->fd = -1;
  s->poll_gone = 1;
  if (s->js_gone) free_sock(s);
}

/** Lets go of the callback and the buffers (they are collected once JavaScript drops them too). */
static void release_js(Sock* s) {
  napi_delete_reference(s->env, s->on_batch);
  for (int i = 0; i < 5; i++) napi_delete_reference(s->env, s->bufs[i]);
  napi_async_destroy(s->env, s->actx);
}

/** Stops reading and lets go of the JavaScript side; the fd is closed with the poll handle. */
static void close_sock(Sock* s, int release) {
  if (s->closed) return;
  s->closed = 1;
  uv_poll_stop(&s->poll);
  if (release) release_js(s);
  uv_close((uv_handle_t*)&s->poll, on_poll_closed);
}

static void cleanup_hook(void* arg) {
  Sock* s = (Sock*)arg;
  // The environment is going away: its references go with it.
  close_sock(s, 0);
}

// The handle collected without close(): the socket is closed here, and its references deleted (the
// buffers and the callback would stay alive for good otherwise). At the environment's teardown the
// cleanup hook has closed it first, without touching them.
static void finalize_handle(napi_env env, void* data, void* hint) {
  (void)hint;
  Sock* s = (Sock*)data;
  if (!s->closed) {
    napi_remove_env_cleanup_hook(env, cleanup_hook, s);
    close_sock(s, 1);
  }
  s->js_gone = 1;
  if (s->poll_gone) free_sock(s);
}

static socklen_t addr_len(const Sock* s) {
  return s->family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/** Sends out[0..n): a message the kernel refuses (ENOBUFS, EAGAIN, an unreachable address) is dropped. */
static void send_all(Sock* s, unsigned n) {
  unsigned off = 0;
  while (off < n) {
    int r = sendmmsg(s->fd, s->out + off, n - off, MSG_DONTWAIT);
    if (r > 0) {
      off += (unsigned)r;
      s->sent += r;
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else {
      // The first message of the rest failed: drop it, send the others.
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) s->errors++;
      s->dropped++;
      off++;
    }
  }
}

/** Calls onBatch(n) (n < 0: -errno of a socket error) in a callback scope, so promises run after. */
static int call_js(Sock* s, int n) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return -1;
  napi_value cb, recv, arg, result;
  int ok = napi_get_reference_value(env, s->on_batch, &cb) == napi_ok && napi_get_global(env, &recv) == napi_ok &&
           napi_create_int32(env, n, &arg) == napi_ok;
  if (ok) {
    napi_status st = napi_make_callback(env, s->actx, recv, cb, 1, &arg, &result);
    if (st == napi_pending_exception) {
      napi_value err;
      napi_get_and_clear_last_exception(env, &err);
      napi_fatal_exception(env, err);
    }
  }
  napi_close_handle_scope(env, scope);
  return ok ? 0 : -1;
}

static void on_readable(uv_poll_t* h, int status, int events) {
  Sock* s = (Sock*)h->data;
  if (s->closed) return;
  if (status < 0) {
    s->errors++;
    call_js(s, status);
    return;
  }
  if (!(events & UV_READABLE)) return;
  for (int round = 0; round < MAX_ROUNDS && !s->closed; round++) {
    for (unsigned i = 0; i < s->batch; i++) {
      s->in[i].msg_hdr.msg_namelen = ADDR;
      s->in[i].msg_hdr.msg_flags = 0;
    }
    int n = recvmmsg(s->fd, s->in, s->batch, MSG_DONTWAIT, NULL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      s->errors++;
      call_js(s, -errno);
      return;
    }
    if (n == 0) return;
    s->received += n;
    s->batches++;
    for (int i = 0; i < n; i++) {
      s->lens[i] = (int32_t)s->in[i].msg_len;
      s->tx_lens[i] = 0;
    }
    if (call_js(s, n) != 0 || s->closed) return;
    unsigned out = 0;
    for (int i = 0; i < n; i++) {
      int32_t len = s->tx_lens[i];
      if (len <= 0 || len > SLOT) continue;
      struct mmsghdr* m = &s->out[out];
      s->out_iov[out].iov_base = s->tx + (size_t)i * SLOT;
      s->out_iov[out].iov_len = (size_t)len;
      memset(&m->msg_hdr, 0, sizeof m->msg_hdr);
      m->msg_hdr.msg_name = s->addrs + (size_t)i * ADDR;
      m->msg_hdr.msg_namelen = addr_len(s);
      m->msg_hdr.msg_iov = &s->out_iov[out];
      m->msg_hdr.msg_iovlen = 1;
      out++;
    }
    if (out > 0) send_all(s, out);
    if ((unsigned)n < s->batch) return;
  }
}

/**
 * The prologue of the calls on a handle: their `n` arguments into argv (undefined where not
 * given), and the socket of the first, the handle; NULL when it is not a handle or is closed.
 */
static Sock* open_sock_of(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  size_t argc = n;
  void* p = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok ||
      napi_get_value_external(env, argv[0], &p) != napi_ok || p == NULL)
    return NULL;
  Sock* s = (Sock*)p;
  return s->closed ? NULL : s;
}

static void* buffer_data(napi_env env, napi_value v, size_t min) {
  void* data = NULL;
  size_t len = 0;
  if (napi_get_buffer_info(env, v, &data, &len) != napi_ok || len < min) return NULL;
  return data;
}

/**
 * A UDP socket bound to host:port (an IP literal), non-blocking, with SO_REUSEPORT when asked;
 * -1 with a JavaScript error thrown when it cannot be.
 */
static int bind_udp(napi_env env, const char* host, int port, int rcvbuf, int reuseport, int* family_out) {
  struct sockaddr_storage sa;
  memset(&sa, 0, sizeof sa);
  socklen_t sa_len;
  int family;
  struct sockaddr_in* v4 = (struct sockaddr_in*)&sa;
  struct sockaddr_in6* v6 = (struct sockaddr_in6*)&sa;
  if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
    family = AF_INET;
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    sa_len = sizeof *v4;
  } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
    family = AF_INET6;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    sa_len = sizeof *v6;
  } else {
    napi_throw_type_error(env, "EINVAL", "open: host is not an IP address");
    return -1;
  }
  int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw_errno(env, "socket", errno);
    return -1;
  }
  int one = 1;
  if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    int e = errno;
    close(fd);
    throw_errno(env, "SO_REUSEPORT", e);
    return -1;
  }
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (bind(fd, (struct sockaddr*)&sa, sa_len) != 0) {
    int e = errno;
    close(fd);
    throw_errno(env, "bind", e);
    return -1;
  }
  *family_out = family;
  return fd;
}

// bind(host, port, recvBufferSize) -> fd: a UDP socket bound for processes started after (they
// inherit it and pass "fd:<n>" to open); nothing reads it here. Closed with closeFd.
static napi_value js_bind(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], out;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char host[64];
  size_t host_len;
  int32_t port = -1, rcvbuf = 0;
  if (argc < 3 || napi_get_value_string_utf8(env, argv[0], host, sizeof host, &host_len) != napi_ok ||
      napi_get_value_int32(env, argv[1], &port) != napi_ok || napi_get_value_int32(env, argv[2], &rcvbuf) != napi_ok ||
      port < 0 || port > 65535) {
    napi_throw_type_error(env, NULL, "bind: host, port 0..65535, recvBufferSize");
    return NULL;
  }
  int family;
  int fd = bind_udp(env, host, port, rcvbuf, 0, &family);
  if (fd < 0) return NULL;
  CHECK(napi_create_int32(env, fd, &out));
  return out;
}

// closeFd(fd): closes a socket of bind()
static napi_value js_close_fd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc >= 1 && napi_get_value_int32(env, argv[0], &fd) == napi_ok && fd > 2) close(fd);
  return NULL;
}

// open(host, port, batch, rx, addrs, lens, tx, txLens, recvBufferSize, onBatch) -> handle
static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 10) {
    napi_throw_type_error(env, NULL, "open: 10 arguments");
    return NULL;
  }
  char host[64];
  size_t host_len;
  CHECK(napi_get_value_string_utf8(env, argv[0], host, sizeof host, &host_len));
  int32_t port, batch, rcvbuf;
  CHECK(napi_get_value_int32(env, argv[1], &port));
  CHECK(napi_get_value_int32(env, argv[2], &batch));
  CHECK(napi_get_value_int32(env, argv[8], &rcvbuf));
  if (batch < 1 || batch > 1024 || port < 0 || port > 65535) {
    napi_throw_range_error(env, NULL, "open: batch 1..1024, port 0..65535");
    return NULL;
  }
  uint8_t* rx = buffer_data(env, argv[3], (size_t)batch * SLOT);
  uint8_t* addrs = buffer_data(env, argv[4], (size_t)batch * ADDR);
  int32_t* lens = buffer_data(env, argv[5], (size_t)batch * 4);
  uint8_t* tx = buffer_data(env, argv[6], (size_t)batch * SLOT);
  int32_t* tx_lens = buffer_data(env, argv[7], (size_t)batch * 4);
  if (!rx || !addrs || !lens || !tx || !tx_lens) {
    napi_throw_type_error(env, NULL, "open: a buffer is missing or too small");
    return NULL;
  }

  int family;
  int fd;
  if (strncmp(host, "fd:", 3) == 0) {
    // A socket bound by another process (the dns role's primary) and inherited at this number:
    // every worker reads the same socket, as NSD's server processes do.
    fd = atoi(host + 3);
    struct sockaddr_storage own;
    socklen_t own_len = sizeof own;
    if (fd < 3 || getsockname(fd, (struct sockaddr*)&own, &own_len) != 0)
      return throw_errno(env, "getsockname", fd < 3 ? EBADF : errno);
    family = own.ss_family;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return throw_errno(env, "fcntl", errno);
  } else {
    fd = bind_udp(env, host, port, rcvbuf, 1, &family);
    if (fd < 0) return NULL;
  }

  Sock* s = calloc(1, sizeof(Sock));
  s->in = calloc((size_t)batch, sizeof(struct mmsghdr));
  s->in_iov = calloc((size_t)batch, sizeof(struct iovec));
  s->out = calloc((size_t)batch, sizeof(struct mmsghdr));
  s->out_iov = calloc((size_t)batch, sizeof(struct iovec));
  s->fd = fd;
  s->family = family;
  s->batch = (unsigned)batch;
  s->env = env;
  s->rx = rx;
  s->addrs = addrs;
  s->lens = lens;
  s->tx = tx;
  s->tx_lens = tx_lens;
  for (int i = 0; i < batch; i++) {
    s->in_iov[i].iov_base = rx + (size_t)i * SLOT;
    s->in_iov[i].iov_len = SLOT;
    s->in[i].msg_hdr.msg_name = addrs + (size_t)i * ADDR;
    s->in[i].msg_hdr.msg_iov = &s->in_iov[i];
    s->in[i].msg_hdr.msg_iovlen = 1;
  }
  napi_create_reference(env, argv[9], 1, &s->on_batch);
  for (int i = 0; i < 5; i++) napi_create_reference(env, argv[3 + i], 1, &s->bufs[i]);
  napi_value name;
  napi_create_string_utf8(env, "omniname:udp-batch", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &s->actx);

  uv_loop_t* loop;
  napi_get_uv_event_loop(env, &loop);
  int r = uv_poll_init(loop, &s->poll, fd);
  if (r != 0) {
    release_js(s);
    close(fd);
    free_sock(s);
    return throw_errno(env, "uv_poll_init", -r);
  }
  s->poll.data = s;
  r = uv_poll_start(&s->poll, UV_READABLE, on_readable);
  if (r != 0) {
    // No handle is given out: the poll's close frees the rest.
    s->js_gone = 1;
    close_sock(s, 1);
    return throw_errno(env, "uv_poll", -r);
  }
  napi_add_env_cleanup_hook(env, cleanup_hook, s);
  napi_value handle;
  CHECK(napi_create_external(env, s, finalize_handle, NULL, &handle));
  return handle;
}

// port(handle) -> the bound port
static napi_value js_port(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  Sock* s = open_sock_of(env, info, 1, argv);
  if (!s) return throw_errno(env, "port", EBADF);
  struct sockaddr_storage sa;
  socklen_t len = sizeof sa;
  if (getsockname(s->fd, (struct sockaddr*)&sa, &len) != 0) return throw_errno(env, "getsockname", errno);
  int port = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6*)&sa)->sin6_port)
                                      : ntohs(((struct sockaddr_in*)&sa)->sin_port);
  CHECK(napi_create_int32(env, port, &out));
  return out;
}

// send(handle, data, addr) -> true when the kernel took it (a closed socket, EAGAIN, ENOBUFS: false)
static napi_value js_send(napi_env env, napi_callback_info info) {
  napi_value argv[3], out;
  Sock* s = open_sock_of(env, info, 3, argv);
  void* data = NULL;
  size_t len = 0;
  void* addr = NULL;
  size_t alen = 0;
  int ok = 0;
  if (s && napi_get_buffer_info(env, argv[1], &data, &len) == napi_ok &&
      napi_get_buffer_info(env, argv[2], &addr, &alen) == napi_ok && alen >= addr_len(s)) {
    ssize_t r;
    do r = sendto(s->fd, data, len, MSG_DONTWAIT, (struct sockaddr*)addr, addr_len(s));
    while (r < 0 && errno == EINTR);
    if (r >= 0) {
      s->sent++;
      ok = 1;
    } else {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) s->errors++;
      s->dropped++;
    }
  }
  CHECK(napi_get_boolean(env, ok, &out));
  return out;
}

// close(handle): idempotent; the fd is closed on the loop's next turn
static napi_value js_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  Sock* s = open_sock_of(env, info, 1, argv);
  if (s) {
    napi_remove_env_cleanup_hook(env, cleanup_hook, s);
    close_sock(s, 1);
  }
  return NULL;
}

static void set_number(napi_env env, napi_value obj, const char* key, double v) {
  napi_value n;
  napi_create_double(env, v, &n);
  napi_set_named_property(env, obj, key, n);
}

// stats(handle) -> { received, sent, dropped, errors, batches }
static napi_value js_stats(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  Sock* s = open_sock_of(env, info, 1, argv);
  CHECK(napi_create_object(env, &out));
  if (s) {
    set_number(env, out, "received", s->received);
    set_number(env, out, "sent", s->sent);
    set_number(env, out, "dropped", s->dropped);
    set_number(env, out, "errors", s->errors);
    set_number(env, out, "batches", s->batches);
  }
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"open", NULL, js_open, NULL, NULL, NULL, napi_default, NULL},
      {"port", NULL, js_port, NULL, NULL, NULL, napi_default, NULL},
      {"send", NULL, js_send, NULL, NULL, NULL, napi_default, NULL},
      {"bind", NULL, js_bind, NULL, NULL, NULL, napi_default, NULL},
      {"closeFd", NULL, js_close_fd, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, js_stats, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value slot, addr;
  napi_create_int32(env, SLOT, &slot);
  napi_create_int32(env, ADDR, &addr);
  napi_set_named_property(env, exports, "SLOT", slot);
  napi_set_named_property(env, exports, "ADDR", addr);
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
