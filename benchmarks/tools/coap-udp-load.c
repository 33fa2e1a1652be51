/*
 * coap-udp-load: a closed-loop CoAP-over-UDP load generator. Each of S client sockets (a distinct
 * source port, so a distinct peer to the server) keeps W requests outstanding for D seconds: as soon
 * as a request is answered, that slot sends the next one. The offered load is therefore whatever the
 * server sustains; coap-rate-load.c is the open-loop twin that offers a fixed rate.
 *
 *   coap-udp-load [-h host] [-p port] [-u /path] [-c sockets] [-w window] [-d seconds] [-t timeout_ms] [-n]
 *
 *   -c  client sockets, 1..8192 (default 1); the soft limit on open files is raised to fit
 *   -w  requests outstanding per socket, 1..256 (default 2)
 *   -d  length of the run in seconds (default 5)
 *   -t  a request unanswered this long counts as a timeout and its slot sends a new one (default 1000)
 *   -n  NON requests instead of CON
 *
 * Every request is a GET with a 4-byte token (the request's sequence number) and one Uri-Path option
 * per path segment; each socket counts its own Message IDs up from a random start. A response is
 * matched by socket and token; a separate CON response is acknowledged (RFC 7252 section 5.2.2) and
 * the empty ACK before it only shows the request arrived. Latency runs from the send to the response.
 *
 * Message IDs: a server deduplicates by (peer, Message ID) for EXCHANGE_LIFETIME (247 s, RFC 7252
 * section 4.8.2), and a socket has 65,536 IDs, so a few sockets at a high rate would come back to an
 * ID within that time and be answered from the server's deduplication cache (with the old token,
 * which matches nothing here). Before that happens the client moves to a new socket (a new source
 * port, so a new peer to the server); the old one stays open until its outstanding requests are
 * settled. renewed counts these moves; none happen below 65,536 requests per socket per 247 s.
 *
 * Output: one line of key=value pairs:
 *   sent=... ok=... bad=... timeouts=... rps=... p50_us=... p99_us=... p999_us=... max_us=... renewed=...
 *   empty_acks=... separate=... unavailable=...
 * ok counts 2.xx responses, bad any other response (and RSTs); rps is ok per second of the run. A
 * request still outstanding when the run ends is in sent only. What the server did besides answering at
 * once: empty_acks counts the empty ACKs it sent before a separate response, separate the separate CON
 * responses (each acknowledged here, so each cost the server a datagram more to receive), unavailable the
 * 5.03 Service Unavailable answers among bad (load shedding, RFC 7252 section 5.9.3.4).
 * Exit status 0 when at least one response arrived, 1 otherwise, 2 on a usage or socket error.
 *
 * Build: cc -O2 -o coap-udp-load coap-udp-load.c   (Linux: epoll)
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

#include "load-common.h"

#define MAX_SOCKETS 8192
#define MAX_WINDOW 256
#define HIST_BUCKETS 2000000 /* 1 us buckets up to 2 s; slower answers land in the last one */
#define EXCHANGE_LIFETIME_US 247000000u

typedef struct {
  uint32_t token;   /* the request this slot waits for */
  uint8_t on_old;   /* it went out on the client's previous socket, which is draining */
  uint64_t sent_at; /* when it went out; 0 = nothing outstanding */
} slot_t;

typedef struct {
  int fd;               /* the socket new requests go out on */
  int old_fd;           /* the previous socket until its outstanding requests are settled; -1 = none */
  int draining;         /* outstanding requests on old_fd */
  uint16_t mid;         /* the next Message ID */
  uint64_t sent;        /* requests sent on fd */
  uint64_t cycle_start; /* when fd last used the Message ID it comes back to after 65,536 sends */
} client_t;

static uint64_t hist[HIST_BUCKETS];

static struct addrinfo *server;
static int ep;
static client_t *clients;
static slot_t *slots; /* the window of client i at slots[i * window] */
static int window;
static uint8_t request[8 + 256];
static size_t request_length;
static uint32_t next_token;
static uint64_t sent, renewed, ok, bad, max_us, empty_acks, separate, unavailable;

/* epoll data: the client's index times two, plus one for its draining socket. */
static int open_socket(int i, int old) {
  int fd = socket(server->ai_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0 || connect(fd, server->ai_addr, server->ai_addrlen) < 0) {
    fprintf(stderr, "coap-udp-load: socket for client %d: %s\n", i + 1, strerror(errno));
    exit(2);
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i * 2u + (uint32_t)old};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
    perror("coap-udp-load: epoll_ctl");
    exit(2);
  }
  return fd;
}

/* The client's current socket becomes its draining one, and a new socket its current one. */
static void renew(int i) {
  client_t *c = &clients[i];
  if (c->old_fd >= 0) close(c->old_fd); /* 65,536 sends later and still not settled: lost, they time out */
  c->old_fd = c->fd;
  struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i * 2u + 1u};
  epoll_ctl(ep, EPOLL_CTL_MOD, c->old_fd, &ev);
  c->draining = 0;
  slot_t *w = &slots[(size_t)i * (size_t)window];
  for (int k = 0; k < window; k++) {
    w[k].on_old = w[k].sent_at != 0;
    c->draining += w[k].on_old;
  }
  c->fd = open_socket(i, 0);
  c->sent = 0;
  renewed++;
  if (c->draining == 0) {
    close(c->old_fd);
    c->old_fd = -1;
  }
}

/* Slot k of client i is settled (answered or given up): one fewer request for a draining socket. */
static void settle(int i, slot_t *s) {
  client_t *c = &clients[i];
  s->sent_at = 0;
  if (s->on_old) {
    s->on_old = 0;
    if (--c->draining == 0 && c->old_fd >= 0) {
      close(c->old_fd);
      c->old_fd = -1;
    }
  }
}

/* Sends a new request from slot k of client i. A send the kernel refuses (a full buffer) leaves the
 * slot waiting all the same: it times out and tries again, as a lost datagram would. */
static void send_request(int i, int k, uint64_t now) {
  client_t *c = &clients[i];
  if (c->sent % 65536 == 0 && c->sent > 0) {
    /* The Message ID about to be used was last used 65,536 sends ago, at cycle_start. */
    if (now - c->cycle_start < EXCHANGE_LIFETIME_US) renew(i);
  }
  if (c->sent % 65536 == 0) c->cycle_start = now;
  slot_t *s = &slots[(size_t)i * (size_t)window + (size_t)k];
  uint16_t mid = c->mid++;
  uint32_t token = next_token++;
  request[2] = (uint8_t)(mid >> 8);
  request[3] = (uint8_t)mid;
  memcpy(request + 4, &token, 4);
  s->token = token;
  s->sent_at = now;
  c->sent++;
  sent++;
  send(c->fd, request, request_length, 0);
}

/* A datagram on client i's current socket (old = 0) or draining one (old = 1). */
static void on_datagram(int i, int old, int fd, const uint8_t *buf, ssize_t got, uint64_t end) {
  if (got < 4 || (buf[0] >> 6) != 1) return; /* not CoAP version 1 */
  int type = (buf[0] >> 4) & 3, tkl = buf[0] & 0x0f, code = buf[1];
  if (type == 0) { /* a separate response as CON: acknowledge it (RFC 7252 section 5.2.2) */
    uint8_t ack[4] = {0x60, 0x00, buf[2], buf[3]};
    send(fd, ack, sizeof ack, 0);
    if (code != 0) separate++;
  }
  if (code == 0 && type == 2) { /* the empty ACK of a separate response: still waiting */
    empty_acks++;
    return;
  }
  if (tkl != 4 || got < 8) {
    if (code == 0 && type == 3) bad++; /* an RST: the slot times out and sends again */
    return;
  }
  uint32_t token;
  memcpy(&token, buf + 4, 4);
  slot_t *w = &slots[(size_t)i * (size_t)window];
  int k = 0;
  while (k < window && !(w[k].sent_at != 0 && w[k].token == token && w[k].on_old == old)) k++;
  if (k == window) return; /* a late or duplicate answer to a request already settled */
  uint64_t t = now_us(), lat = t - w[k].sent_at;
  hist[lat < HIST_BUCKETS ? lat : HIST_BUCKETS - 1]++;
  if (lat > max_us) max_us = lat;
  if ((code >> 5) == 2) ok++; else bad++;
  if (code == 0xa3) unavailable++; /* 5.03 */
  settle(i, &w[k]);
  if (t < end) send_request(i, k, t);
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *path = "/", *port = "5683";
  int sockets = 1, seconds = 5, con = 1, timeout_ms = 1000;
  window = 2;
  int opt;
  while ((opt = getopt(argc, argv, "h:p:u:c:w:d:t:n")) != -1) {
    switch (opt) {
    case 'h': host = optarg; break;
    case 'p': port = optarg; break;
    case 'u': path = optarg; break;
    case 'c': sockets = atoi(optarg); break;
    case 'w': window = atoi(optarg); break;
    case 'd': seconds = atoi(optarg); break;
    case 't': timeout_ms = atoi(optarg); break;
    case 'n': con = 0; break;
    default:
      fprintf(stderr, "usage: coap-udp-load [-h host] [-p port] [-u /path] [-c sockets] [-w window] [-d seconds] [-t timeout_ms] [-n]\n");
      return 2;
    }
  }
  if (sockets < 1 || sockets > MAX_SOCKETS || window < 1 || window > MAX_WINDOW || seconds < 1 || timeout_ms < 1 ||
      strlen(path) > 200) {
    fprintf(stderr, "coap-udp-load: -c 1..%d, -w 1..%d, -d 1.., -t 1.., and a path under 200 bytes\n", MAX_SOCKETS, MAX_WINDOW);
    return 2;
  }

  /* Up to two descriptors per client (one draining) plus a few: raise the soft limit as far as the hard one allows. */
  raise_open_files((rlim_t)sockets * 2 + 16);

  server = resolve_udp("coap-udp-load", host, port);
  clients = calloc((size_t)sockets, sizeof *clients);
  slots = calloc((size_t)sockets * (size_t)window, sizeof *slots);
  ep = epoll_create1(0);
  if (!clients || !slots || ep < 0) {
    perror("coap-udp-load");
    return 2;
  }
  srand((unsigned)now_us());
  for (int i = 0; i < sockets; i++) {
    clients[i].fd = open_socket(i, 0);
    clients[i].old_fd = -1;
    clients[i].mid = (uint16_t)rand();
  }

  /* RFC 7252 section 3: version 1, CON or NON, token length 4; code 0.01 GET; then the Uri-Path options. */
  request[0] = (uint8_t)(0x40 | (con ? 0x00 : 0x10) | 4);
  request[1] = 0x01;
  request_length = 8 + path_options(request + 8, path);

  uint64_t start = now_us(), end = start + (uint64_t)seconds * 1000000u, timeout_us = (uint64_t)timeout_ms * 1000u;
  for (int i = 0; i < sockets; i++)
    for (int k = 0; k < window; k++) send_request(i, k, now_us());

  uint64_t timeouts = 0, next_sweep = start + 10000;
  uint8_t buf[2048];
  struct epoll_event events[512];
  for (;;) {
    uint64_t now = now_us();
    if (now >= end) break;
    if (now >= next_sweep) {
      /* Requests lost on the way (a full queue at the server drops them) get a new one in their slot. */
      for (size_t j = 0; j < (size_t)sockets * (size_t)window; j++) {
        if (slots[j].sent_at != 0 && now - slots[j].sent_at >= timeout_us) {
          int i = (int)(j / (size_t)window);
          timeouts++;
          settle(i, &slots[j]);
          send_request(i, (int)(j % (size_t)window), now);
        }
      }
      next_sweep = now + 10000; /* every 10 ms: a timeout is a second, the sweep need not be finer */
    }
    uint64_t wake = next_sweep < end ? next_sweep : end;
    int n = epoll_wait(ep, events, 512, (int)((wake - now + 999) / 1000));
    if (n < 0 && errno != EINTR) {
      perror("coap-udp-load: epoll_wait");
      return 2;
    }
    for (int e = 0; e < n; e++) {
      int i = (int)(events[e].data.u32 / 2), old = (int)(events[e].data.u32 % 2);
      /* Everything the socket holds: with the server's queue deep, both answers of a window are often there. */
      for (;;) {
        int fd = old ? clients[i].old_fd : clients[i].fd;
        if (fd < 0) break; /* the draining socket was closed: all its requests are settled */
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got < 0) break; /* EAGAIN, or an ICMP error (the server is not there yet) */
        on_datagram(i, old, fd, buf, got, end);
      }
    }
  }
  double secs = (double)(now_us() - start) / 1e6;
  printf("sent=%llu ok=%llu bad=%llu timeouts=%llu rps=%.0f p50_us=%llu p99_us=%llu p999_us=%llu max_us=%llu renewed=%llu "
         "empty_acks=%llu separate=%llu unavailable=%llu\n",
         (unsigned long long)sent, (unsigned long long)ok, (unsigned long long)bad, (unsigned long long)timeouts, (double)ok / secs,
         (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.50), (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.99),
         (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.999), (unsigned long long)max_us, (unsigned long long)renewed,
         (unsigned long long)empty_acks, (unsigned long long)separate, (unsigned long long)unavailable);
  return ok + bad > 0 ? 0 : 1;
}
