/*
 * coap-tcp-load: a closed-loop CoAP-over-TCP (RFC 8323) load generator, the TCP twin of
 * coap-udp-load.c with the same options and output.
 *
 * Opens C connections to one server, sends each one's CSM (RFC 8323 section 5.3), then keeps W
 * requests outstanding per connection for D seconds, matching responses by token, and prints
 * throughput and latency percentiles.
 *
 *   coap-tcp-load [-h host] [-p port] [-u /path] [-c connections] [-w window] [-d seconds] [-s]
 *
 *   -s   each connection from a loopback address of its own (127.1.0.1, 127.1.0.2, ...; IPv4 loopback only), as a
 *        fleet of devices would come: a server bounds the connections from one address (CoapNet's
 *        MaxConnectionsPerAddress is 100 by default), which a run of 1,000 connections from 127.0.0.1 would meet
 *
 * Output: one line of key=value pairs, as coap-udp-load prints:
 *   sent=... ok=... bad=... timeouts=0 rps=... p50_us=... p99_us=... max_us=...
 * (TCP retransmits below us: a request is never lost, so timeouts is always 0.) A peer's Ping
 * (7.02) is answered with a Pong (7.03); other signals are skipped. Exit status 0 when at least
 * one response arrived, 1 otherwise; 2 on a usage or connection error, or when the server
 * closes a connection (an Abort, 7.05, or a reset) during the run.
 *
 * Build: cc -O2 -o coap-tcp-load coap-tcp-load.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "load-common.h"

#define MAX_CONNECTIONS 1024
#define MAX_WINDOW 256
#define HIST_BUCKETS 200000 /* 10 us buckets up to 2 s */
#define INPUT 65536

typedef struct {
  int fd;
  uint64_t sent_at[MAX_WINDOW]; /* 0 = free slot */
  uint8_t in[INPUT];
  size_t have;
} conn_t;

static uint64_t hist[HIST_BUCKETS];

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *path = "/", *port = "5683";
  int conns = 1, window = 16, seconds = 5, spread = 0;
  int opt;
  while ((opt = getopt(argc, argv, "h:p:u:c:w:d:s")) != -1) {
    switch (opt) {
    case 'h': host = optarg; break;
    case 'p': port = optarg; break;
    case 'u': path = optarg; break;
    case 'c': conns = atoi(optarg); break;
    case 'w': window = atoi(optarg); break;
    case 'd': seconds = atoi(optarg); break;
    case 's': spread = 1; break;
    default:
      fprintf(stderr, "usage: see the comment at the top of coap-tcp-load.c\n");
      return 2;
    }
  }
  if (conns < 1 || conns > MAX_CONNECTIONS || window < 1 || window > MAX_WINDOW || strlen(path) > 200) {
    fprintf(stderr, "coap-tcp-load: -c 1..%d, -w 1..%d, a path under 200 bytes\n", MAX_CONNECTIONS, MAX_WINDOW);
    return 2;
  }
  struct addrinfo hints = {0}, *ai;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &ai) != 0) {
    fprintf(stderr, "coap-tcp-load: cannot resolve %s\n", host);
    return 2;
  }

  uint8_t options[256];
  size_t options_length = path_options(options, path);
  if (spread && ai->ai_family != AF_INET) {
    fprintf(stderr, "coap-tcp-load: -s needs an IPv4 host (loopback source addresses)\n");
    return 2;
  }
  conn_t *cl = calloc((size_t)conns, sizeof *cl);
  /* epoll, not poll: with 1,000 connections and one request each, a poll over every socket per wake-up would make
   * the generator, not the server, the bound. */
  int ep = epoll_create1(0);
  struct epoll_event events[MAX_CONNECTIONS];
  uint8_t out[512];
  uint64_t sent = 0, ok = 0, bad = 0, max_us = 0;
  for (int i = 0; i < conns; i++) {
    cl[i].fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (cl[i].fd >= 0 && spread) {
      struct sockaddr_in source = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7F010001u + (uint32_t)i)};
      if (bind(cl[i].fd, (struct sockaddr *)&source, sizeof source) < 0) { perror("coap-tcp-load: bind"); return 2; }
    }
    if (cl[i].fd < 0 || connect(cl[i].fd, ai->ai_addr, ai->ai_addrlen) < 0) {
      perror("coap-tcp-load: connect");
      return 2;
    }
    int one = 1;
    setsockopt(cl[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, cl[i].fd, &ev) < 0) { perror("coap-tcp-load: epoll_ctl"); return 2; }

    /* RFC 8323 section 5.3.1: a CSM first, here with no options (the defaults). */
    size_t n = tcp_frame(out, 0xE1, NULL, 0, NULL, 0);
    for (int s = 0; s < window; s++) {
      uint32_t token = (uint32_t)s;
      n += tcp_frame(out + n, 1, (const uint8_t *)&token, 4, options, options_length);
      if (n > sizeof out - 260) {
        if (send_all(cl[i].fd, out, n) < 0) { perror("coap-tcp-load: send"); return 2; }
        n = 0;
      }
    }
    uint64_t t = now_us();
    for (int s = 0; s < window; s++) cl[i].sent_at[s] = t;
    if (n && send_all(cl[i].fd, out, n) < 0) { perror("coap-tcp-load: send"); return 2; }
    sent += (uint64_t)window;
  }

  uint64_t start = now_us(), end = start + (uint64_t)seconds * 1000000u;
  while (now_us() < end) {
    int r = epoll_wait(ep, events, MAX_CONNECTIONS, 10);
    for (int e = 0; e < r; e++) {
      int i = (int)events[e].data.u32;
      conn_t *c = &cl[i];
      ssize_t got = recv(c->fd, c->in + c->have, INPUT - c->have, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        fprintf(stderr, "coap-tcp-load: the server closed connection %d\n", i);
        return 2;
      }
      if (got < 0) continue;
      c->have += (size_t)got;
      size_t at = 0, n_out = 0;
      for (;;) {
        int code, tkl;
        const uint8_t *token;
        size_t total = tcp_frame_parse(c->in + at, c->have - at, &code, &token, &tkl);
        if (total == 0) {
          if (c->have - at == INPUT) { fprintf(stderr, "coap-tcp-load: a frame over %d bytes\n", INPUT); return 2; }
          break;
        }
        at += total;
        if (code >> 5 == 7) {
          if (code == 0xE2 && n_out < sizeof out - 20) n_out += tcp_frame(out + n_out, 0xE3, token, tkl, NULL, 0); /* Ping: Pong */
          continue;
        }
        uint32_t slot;
        if (tkl != 4) { bad++; continue; }
        memcpy(&slot, token, 4);
        if (slot >= (uint32_t)window || c->sent_at[slot] == 0) { bad++; continue; }
        uint64_t now = now_us();
        uint64_t lat = now - c->sent_at[slot];
        if (code >> 5 == 2) ok++; else bad++;
        uint64_t b = lat / 10;
        hist[b < HIST_BUCKETS ? b : HIST_BUCKETS - 1]++;
        if (lat > max_us) max_us = lat;
        if (n_out > sizeof out - 260) { if (send_all(c->fd, out, n_out) < 0) return 2; n_out = 0; }
        n_out += tcp_frame(out + n_out, 1, token, 4, options, options_length);
        c->sent_at[slot] = now_us();
        sent++;
      }
      if (n_out && send_all(c->fd, out, n_out) < 0) { fprintf(stderr, "coap-tcp-load: send failed\n"); return 2; }
      memmove(c->in, c->in + at, c->have - at);
      c->have -= at;
    }
  }
  double secs = (double)(now_us() - start) / 1e6;
  uint64_t p50 = percentile(hist, HIST_BUCKETS, 10, 0.50), p99 = percentile(hist, HIST_BUCKETS, 10, 0.99);
  printf("sent=%llu ok=%llu bad=%llu timeouts=0 rps=%.0f p50_us=%llu p99_us=%llu max_us=%llu\n",
         (unsigned long long)sent, (unsigned long long)ok, (unsigned long long)bad, (double)ok / secs,
         (unsigned long long)p50, (unsigned long long)p99, (unsigned long long)max_us);
  return ok > 0 ? 0 : 1;
}
