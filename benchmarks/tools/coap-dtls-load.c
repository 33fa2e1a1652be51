/*
 * coap-dtls-load: a closed-loop CoAP-over-DTLS (coaps, RFC 7252 section 9.1) load generator on OpenSSL, so the
 * client's record protection costs a few hundred nanoseconds in C and the server, not the generator, is what a run
 * measures. The twin of coap-udp-load.c: each of S sessions (a UDP socket of its own, so a distinct peer and a
 * distinct DTLS 1.2 session to the server) keeps W requests outstanding for D seconds.
 *
 *   coap-dtls-load [-h host] [-p port] [-u /path] [-c sessions] [-w window] [-d seconds] [-t timeout_ms] [-n]
 *                  [-i identity] [-k key] [-x hexkey] [-C ciphers] [-a at_once] [-H handshakes] [-I]
 *
 *   -c  sessions, 1..8192 (default 1), each with a full PSK handshake before the run
 *   -w  requests outstanding per session, 1..256 (default 2)
 *   -d  length of the run in seconds (default 5); with -I, how long the sessions are held
 *   -t  a request unanswered this long counts as a timeout and its slot sends a new one (default 1000)
 *   -n  NON requests instead of CON
 *   -i  PSK identity (default "coapnet", the CoapNet sample server's demo identity)
 *   -k  PSK key as text (default "sample-secret", the sample's demo key); -x the key in hex instead
 *   -C  OpenSSL cipher list (default PSK-AES128-CCM8, TLS_PSK_WITH_AES_128_CCM_8, RFC 7252 section 9.1.3.1's
 *       mandatory suite); PSK-AES128-GCM-SHA256 for the GCM suite
 *   -a  handshakes in flight at once while sessions are set up (default 8)
 *   -H  instead of a load run: N full handshakes (-a at once), each session closed with close_notify once it is up;
 *       prints the rate and the handshake times
 *   -I  instead of a load run: set up the -c sessions, each sending one GET as soon as its handshake is over (as a
 *       device that connects to report does), print "idle sessions=N" once every session has its answer, hold them all idle for -d seconds, then close each with close_notify (a process
 *       beside it reads the server's memory per idle session meanwhile)
 *
 * Requests are GETs with a 4-byte token and the path's Uri-Path options, one per DTLS record; a response is matched by
 * session and token. Each session counts its Message IDs up from a random start; a run is short enough that none
 * comes back to an ID within EXCHANGE_LIFETIME (RFC 7252 section 4.8.2) at the rates a DTLS server reaches here.
 * The handshake answers the server's HelloVerifyRequest (RFC 6347 section 4.2.1) and retransmits its flights on
 * OpenSSL's DTLS timer. OpenSSL 3.0 has no Connection ID (RFC 9146): sessions are found by address.
 *
 * Output: one line of key=value pairs.
 *   load:       sessions=... setup_s=... sent=... ok=... bad=... timeouts=... rps=... p50_us=... p99_us=... p999_us=...
 *               max_us=... cipher=...
 *   -H:         handshakes=... failed=... hps=... p50_us=... p99_us=... cipher=...
 *   -I:         "idle sessions=N cipher=..." when they are idle, then "closed sessions=N" at the end
 * Exit status 0 when every session was set up and at least one response arrived, 1 otherwise, 2 on a usage or
 * socket error.
 *
 * Build: cc -O2 -o coap-dtls-load coap-dtls-load.c -lssl -lcrypto   (Linux: epoll; Debian: libssl-dev)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "dtls-common.h"
#include "load-common.h"

#define MAX_SESSIONS 8192
#define MAX_WINDOW 256
#define HIST_BUCKETS 2000000 /* 1 us buckets up to 2 s */

enum { IDLE, HANDSHAKING, READY, FAILED };

typedef struct {
  uint32_t token;
  uint64_t sent_at; /* 0 = nothing outstanding */
} slot_t;

typedef struct {
  int fd;
  SSL *ssl;
  int state;
  uint16_t mid;
  uint64_t started; /* when its handshake began */
} session_t;

static uint64_t hist[HIST_BUCKETS];
static struct addrinfo *server;
static SSL_CTX *ctx;
static int ep, window, at_once = 8;
static session_t *sessions;
static slot_t *slots;
static uint8_t request[8 + 256];
static size_t request_length;
static uint32_t next_token;
static uint64_t sent, ok, bad, max_us;
static int follow_up = 1; /* a slot sends its next request once answered (not in -I) */
static int get_when_up = 0; /* -I: each session sends its GET as soon as its handshake is over, as a device would */
static const char *identity = "coapnet";
static uint8_t key[256];
static size_t key_length;

static unsigned psk_client(SSL *ssl, const char *hint, char *id, unsigned max_id, unsigned char *psk, unsigned max_psk) {
  (void)ssl;
  (void)hint;
  if (strlen(identity) + 1 > max_id || key_length > max_psk) return 0;
  strcpy(id, identity);
  memcpy(psk, key, key_length);
  return (unsigned)key_length;
}

static void die_ssl(const char *what) {
  fprintf(stderr, "coap-dtls-load: %s\n", what);
  ERR_print_errors_fp(stderr);
  exit(2);
}

/* A new socket and DTLS client for session i, its handshake started (non-blocking: it goes on as datagrams come). */
static void begin(int i, uint64_t now) {
  session_t *s = &sessions[i];
  s->fd = socket(server->ai_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (s->fd < 0 || connect(s->fd, server->ai_addr, server->ai_addrlen) < 0) {
    fprintf(stderr, "coap-dtls-load: socket for session %d: %s\n", i + 1, strerror(errno));
    exit(2);
  }
  BIO *bio = BIO_new_dgram(s->fd, BIO_NOCLOSE);
  BIO_ctrl(bio, BIO_CTRL_DGRAM_SET_CONNECTED, 0, server->ai_addr);
  s->ssl = SSL_new(ctx);
  if (!bio || !s->ssl) die_ssl("SSL_new");
  SSL_set_bio(s->ssl, bio, bio);
  SSL_set_connect_state(s->ssl);
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev) < 0) {
    perror("coap-dtls-load: epoll_ctl");
    exit(2);
  }
  s->state = HANDSHAKING;
  s->started = now;
  s->mid = (uint16_t)rand();
  SSL_do_handshake(s->ssl); /* the ClientHello; WANT_READ from here on until the server's flights arrive */
}

static void finish(session_t *s, int notify) {
  if (s->ssl) {
    if (notify && s->state == READY) SSL_shutdown(s->ssl); /* close_notify (RFC 5246 section 7.2.1) */
    SSL_free(s->ssl);
    s->ssl = NULL;
  }
  if (s->fd >= 0) {
    epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->fd = -1;
  }
}

static void send_request(int i, int k, uint64_t now);

/* Drives the handshakes of sessions [0, count) to the end, at most at_once in flight; returns how many failed.
 * With close_each, a session is closed with close_notify as soon as it is up (the -H measurement). */
static int handshake_all(int count, int close_each, uint64_t handshake_timeout_us) {
  int begun = 0, done = 0, failed = 0, in_flight = 0;
  struct epoll_event events[512];
  uint64_t next_timer = now_us() + 10000;
  while (done < count) {
    uint64_t now = now_us();
    while (in_flight < at_once && begun < count) {
      begin(begun++, now);
      in_flight++;
    }
    int n = epoll_wait(ep, events, 512, 10);
    if (n < 0 && errno != EINTR) {
      perror("coap-dtls-load: epoll_wait");
      exit(2);
    }
    now = now_us();
    for (int e = 0; e < n; e++) {
      session_t *s = &sessions[events[e].data.u32];
      if (s->state != HANDSHAKING) continue;
      int r = SSL_do_handshake(s->ssl);
      if (r == 1) {
        uint64_t took = now - s->started;
        hist[took < HIST_BUCKETS ? took : HIST_BUCKETS - 1]++;
        s->state = READY;
        if (close_each) finish(s, 1);
        else if (get_when_up) send_request((int)events[e].data.u32, 0, now);
        done++, in_flight--;
      } else if (SSL_get_error(s->ssl, r) != SSL_ERROR_WANT_READ) {
        s->state = FAILED;
        finish(s, 0);
        done++, in_flight--, failed++;
      }
    }
    if (now >= next_timer) {
      /* RFC 6347 section 4.2.4: a flight not answered is sent again on the timer OpenSSL keeps per session. */
      for (int i = 0; i < begun; i++) {
        session_t *s = &sessions[i];
        if (s->state != HANDSHAKING) continue;
        if (now - s->started > handshake_timeout_us) {
          s->state = FAILED;
          finish(s, 0);
          done++, in_flight--, failed++;
        } else {
          DTLSv1_handle_timeout(s->ssl);
        }
      }
      next_timer = now + 10000;
    }
  }
  return failed;
}

static void send_request(int i, int k, uint64_t now) {
  session_t *s = &sessions[i];
  slot_t *slot = &slots[(size_t)i * (size_t)window + (size_t)k];
  uint16_t mid = s->mid++;
  uint32_t token = next_token++;
  request[2] = (uint8_t)(mid >> 8);
  request[3] = (uint8_t)mid;
  memcpy(request + 4, &token, 4);
  slot->token = token;
  slot->sent_at = now;
  sent++;
  SSL_write(s->ssl, request, (int)request_length); /* a full socket buffer loses it: the slot times out, as on a lossy link */
}

/* Application data from session i: a response (matched by token), an empty ACK, or a CON to acknowledge. */
static int on_message(int i, const uint8_t *buf, int got, uint64_t end) {
  if (got < 4 || (buf[0] >> 6) != 1) return 0;
  int type = (buf[0] >> 4) & 3, tkl = buf[0] & 0x0f, code = buf[1];
  if (type == 0) { /* a separate response as CON: acknowledge it (RFC 7252 section 5.2.2) */
    uint8_t ack[4] = {0x60, 0x00, buf[2], buf[3]};
    SSL_write(sessions[i].ssl, ack, sizeof ack);
  }
  if (code == 0 || tkl != 4 || got < 8) return 0;
  uint32_t token;
  memcpy(&token, buf + 4, 4);
  slot_t *w = &slots[(size_t)i * (size_t)window];
  int k = 0;
  while (k < window && !(w[k].sent_at != 0 && w[k].token == token)) k++;
  if (k == window) return 0;
  uint64_t t = now_us(), lat = t - w[k].sent_at;
  hist[lat < HIST_BUCKETS ? lat : HIST_BUCKETS - 1]++;
  if (lat > max_us) max_us = lat;
  if ((code >> 5) == 2) ok++; else bad++;
  w[k].sent_at = 0;
  if (follow_up && t < end) send_request(i, k, t);
  return 1;
}

/* Reads every record the sessions' sockets hold until end; returns the responses matched. */
static uint64_t pump(int count, uint64_t end, uint64_t timeout_us, uint64_t *timeouts) {
  uint8_t buf[2048];
  struct epoll_event events[512];
  uint64_t matched = 0, next_sweep = now_us() + 10000;
  for (;;) {
    uint64_t now = now_us();
    if (now >= end) break;
    if (now >= next_sweep) {
      for (size_t j = 0; j < (size_t)count * (size_t)window; j++) {
        if (slots[j].sent_at != 0 && now - slots[j].sent_at >= timeout_us) {
          (*timeouts)++;
          slots[j].sent_at = 0;
          send_request((int)(j / (size_t)window), (int)(j % (size_t)window), now);
        }
      }
      next_sweep = now + 10000;
    }
    uint64_t wake = next_sweep < end ? next_sweep : end;
    int n = epoll_wait(ep, events, 512, (int)((wake - now + 999) / 1000));
    if (n < 0 && errno != EINTR) {
      perror("coap-dtls-load: epoll_wait");
      exit(2);
    }
    for (int e = 0; e < n; e++) {
      int i = (int)events[e].data.u32;
      session_t *s = &sessions[i];
      if (s->state != READY) continue;
      for (;;) {
        int got = SSL_read(s->ssl, buf, sizeof buf);
        if (got <= 0) {
          int err = SSL_get_error(s->ssl, got);
          if (err == SSL_ERROR_ZERO_RETURN || err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) {
            s->state = FAILED; /* the server closed or broke the session: its slots time out for good */
            ERR_clear_error();
          }
          break;
        }
        matched += (uint64_t)on_message(i, buf, got, end);
      }
    }
  }
  return matched;
}

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *path = "/", *port = "5684", *ciphers = "PSK-AES128-CCM8";
  int count = 1, seconds = 5, con = 1, timeout_ms = 1000, handshakes = 0, idle = 0;
  window = 2;
  key_length = strlen("sample-secret");
  memcpy(key, "sample-secret", key_length);
  int opt;
  while ((opt = getopt(argc, argv, "h:p:u:c:w:d:t:ni:k:x:C:a:H:I")) != -1) {
    switch (opt) {
    case 'h': host = optarg; break;
    case 'p': port = optarg; break;
    case 'u': path = optarg; break;
    case 'c': count = atoi(optarg); break;
    case 'w': window = atoi(optarg); break;
    case 'd': seconds = atoi(optarg); break;
    case 't': timeout_ms = atoi(optarg); break;
    case 'n': con = 0; break;
    case 'i': identity = optarg; break;
    case 'k':
      key_length = strlen(optarg);
      if (key_length == 0 || key_length > sizeof key) { fprintf(stderr, "coap-dtls-load: -k takes 1..256 bytes\n"); return 2; }
      memcpy(key, optarg, key_length);
      break;
    case 'x': {
      size_t len = strlen(optarg);
      if (len == 0 || len % 2 || len / 2 > sizeof key) { fprintf(stderr, "coap-dtls-load: -x takes 1..256 bytes in hex\n"); return 2; }
      for (size_t j = 0; j < len / 2; j++) {
        int hi = hexval(optarg[2 * j]), lo = hexval(optarg[2 * j + 1]);
        if (hi < 0 || lo < 0) { fprintf(stderr, "coap-dtls-load: -x '%s' is not hex\n", optarg); return 2; }
        key[j] = (uint8_t)(hi << 4 | lo);
      }
      key_length = len / 2;
      break;
    }
    case 'C': ciphers = optarg; break;
    case 'a': at_once = atoi(optarg); break;
    case 'H': handshakes = atoi(optarg); break;
    case 'I': idle = 1; break;
    default:
      fprintf(stderr, "usage: coap-dtls-load [-h host] [-p port] [-u /path] [-c sessions] [-w window] [-d seconds] [-t timeout_ms] [-n]\n"
                      "                      [-i identity] [-k key | -x hexkey] [-C ciphers] [-a at_once] [-H handshakes] [-I]\n");
      return 2;
    }
  }
  int total = handshakes > 0 ? handshakes : count;
  if (count < 1 || count > MAX_SESSIONS || window < 1 || window > MAX_WINDOW || seconds < 1 || timeout_ms < 1 || at_once < 1 ||
      handshakes < 0 || handshakes > 1000000 || strlen(path) > 200 || strlen(identity) > 127) {
    fprintf(stderr, "coap-dtls-load: -c 1..%d, -w 1..%d, -d 1.., -t 1.., -a 1.., -H 0..1000000, a path under 200 bytes, an identity under 128\n",
            MAX_SESSIONS, MAX_WINDOW);
    return 2;
  }

  raise_open_files((rlim_t)(handshakes > 0 ? at_once : count) + 16);
  server = resolve_udp("coap-dtls-load", host, port);

  ctx = dtls_psk_client_ctx("coap-dtls-load", ciphers, psk_client);

  sessions = calloc((size_t)total, sizeof *sessions);
  slots = calloc((size_t)count * (size_t)window, sizeof *slots);
  ep = epoll_create1(0);
  if (!sessions || !slots || ep < 0) {
    perror("coap-dtls-load");
    return 2;
  }
  for (int i = 0; i < total; i++) sessions[i].fd = -1;
  srand((unsigned)now_us());

  request[0] = (uint8_t)(0x40 | (con ? 0x00 : 0x10) | 4);
  request[1] = 0x01;
  request_length = 8 + path_options(request + 8, path);
  uint64_t timeout_us = (uint64_t)timeout_ms * 1000u;

  uint64_t t0 = now_us();
  if (handshakes > 0) {
    int failed = handshake_all(handshakes, 1, 10000000u);
    double secs = (double)(now_us() - t0) / 1e6;
    printf("handshakes=%d failed=%d hps=%.0f p50_us=%llu p99_us=%llu cipher=%s\n", handshakes - failed, failed,
           (double)(handshakes - failed) / secs, (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.50),
           (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.99), ciphers);
    return failed == 0 ? 0 : 1;
  }

  if (idle) {
    window = 1;
    follow_up = 0;
    get_when_up = 1;
  }
  int failed = handshake_all(count, 0, 10000000u);
  double setup = (double)(now_us() - t0) / 1e6;
  if (failed) fprintf(stderr, "coap-dtls-load: %d of %d handshakes failed\n", failed, count);
  const char *negotiated = "none";
  for (int i = 0; i < count; i++)
    if (sessions[i].state == READY) {
      negotiated = SSL_get_cipher_name(sessions[i].ssl);
      break;
    }
  memset(hist, 0, sizeof hist);
  uint64_t timeouts = 0;

  if (idle) {
    /* One GET per session, sent when its handshake was over; then quiet: the server holds N established, idle sessions. */
    uint64_t deadline = now_us() + 30000000u;
    while (ok + bad < (uint64_t)(count - failed) && now_us() < deadline) pump(count, now_us() + 100000, timeout_us, &timeouts);
    printf("idle sessions=%llu cipher=%s\n", (unsigned long long)(ok + bad), negotiated);
    fflush(stdout);
    sleep((unsigned)seconds);
    for (int i = 0; i < count; i++) finish(&sessions[i], 1);
    printf("closed sessions=%d\n", count - failed);
    return failed == 0 && ok > 0 ? 0 : 1;
  }

  uint64_t start = now_us(), end = start + (uint64_t)seconds * 1000000u;
  for (int i = 0; i < count; i++)
    if (sessions[i].state == READY)
      for (int k = 0; k < window; k++) send_request(i, k, now_us());
  pump(count, end, timeout_us, &timeouts);
  double secs = (double)(now_us() - start) / 1e6;
  printf("sessions=%d setup_s=%.2f sent=%llu ok=%llu bad=%llu timeouts=%llu rps=%.0f p50_us=%llu p99_us=%llu p999_us=%llu max_us=%llu cipher=%s\n",
         count - failed, setup, (unsigned long long)sent, (unsigned long long)ok, (unsigned long long)bad, (unsigned long long)timeouts,
         (double)ok / secs, (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.50),
         (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.99), (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.999),
         (unsigned long long)max_us, negotiated);
  for (int i = 0; i < count; i++) finish(&sessions[i], 1);
  return failed == 0 && ok > 0 ? 0 : 1;
}
