/*
 * coap-rate-load: an open-loop CoAP load generator over UDP or TCP: requests at a fixed rate, whatever
 * the server answers, so two servers can be compared at the same offered load (issue 11: "p99 no worse
 * than libcoap's at the same offered load"; issue 39 asks the same of coap+tcp). coap-udp-load.c and
 * coap-tcp-load.c are closed-loop: there the offered load is whatever the server sustains, and a faster
 * server is measured at a higher load.
 *
 * Sends R requests a second in all for D seconds, spread round-robin over S connected sockets (over UDP
 * each socket counts its own Message IDs up from a random start), then waits T ms for late answers. A
 * request's latency is measured from the moment it was due, not from when it was sent, so a
 * generator or kernel that falls behind shows up in the latency instead of hiding it (no
 * coordinated omission). Separate CON responses are acknowledged.
 *
 *   coap-rate-load [-h host] [-p port] [-u /path] [-c sockets] -r rate [-d seconds] [-t timeout_ms] [-n] [-T]
 *
 *   -n  send NON requests instead of CON.
 *   -T  coap+tcp (RFC 8323): S connections, each opened with a CSM (section 5.3), requests as frames with the
 *       sequence number as token; a Ping (7.02) is answered with a Pong, other signals are skipped. TCP has no
 *       message types, so -n does not apply, and no Message IDs, so any S will do. The server closing a
 *       connection ends the run with status 2.
 *
 * Output: one line of key=value pairs, as coap-udp-load prints, plus the offered rate, p99.9 and how far
 * the sender ever fell behind its schedule:
 *   sent=... ok=... bad=... timeouts=... offered=... rps=... p50_us=... p99_us=... p999_us=... max_us=... behind_us=...
 * Exit status 0 when at least one response arrived, 1 otherwise, 2 on a usage or socket error.
 * Message IDs: a server deduplicates for EXCHANGE_LIFETIME (247 s), so S must be at least
 * R * 247 / 65536; fewer sockets are refused.
 *
 * Build: cc -O2 -o coap-rate-load coap-rate-load.c   (Linux: epoll)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load-common.h"

#define MAX_SOCKETS 4096
#define HIST_BUCKETS 1000000 /* 1 us buckets up to 1 s */
#define RING (1u << 22)      /* due times by sequence number: 4M requests, over 40 s at 100k/s */
#define TCP_INPUT 65536      /* a connection's unparsed input: many responses, and any one frame */

static uint64_t hist[HIST_BUCKETS];
static uint64_t due_at[RING]; /* 0 = answered or never sent */

/* Sets a socket non-blocking. */
static void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

/*
 * The response to request sequence with code: its latency from when it was due goes into the histogram. Returns 1
 * for a duplicate answer or one to no request sent, which counts nothing.
 */
static int answer(uint32_t sequence, int code, uint64_t next, uint64_t *answered, uint64_t *ok, uint64_t *bad, uint64_t *max_us) {
  uint64_t *due = &due_at[sequence % RING];
  if (sequence >= next || *due == 0) return 1;
  uint64_t lat = now_us() - *due;
  *due = 0;
  (*answered)++;
  if ((code >> 5) == 2) (*ok)++; else (*bad)++;
  hist[lat < HIST_BUCKETS ? lat : HIST_BUCKETS - 1]++;
  if (lat > *max_us) *max_us = lat;
  return 0;
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *path = "/", *port = "5683";
  int sockets = 128, seconds = 8, con = 1, timeout_ms = 2000, tcp = 0;
  double rate = 0;
  int opt;
  while ((opt = getopt(argc, argv, "h:p:u:c:r:d:t:nT")) != -1) {
    switch (opt) {
    case 'h': host = optarg; break;
    case 'p': port = optarg; break;
    case 'u': path = optarg; break;
    case 'c': sockets = atoi(optarg); break;
    case 'r': rate = atof(optarg); break;
    case 'd': seconds = atoi(optarg); break;
    case 't': timeout_ms = atoi(optarg); break;
    case 'n': con = 0; break;
    case 'T': tcp = 1; break;
    default:
      fprintf(stderr, "usage: see the comment at the top of coap-rate-load.c\n");
      return 2;
    }
  }
  if (sockets < 1 || sockets > MAX_SOCKETS || rate < 1 || rate > 1e6 || seconds < 1 || strlen(path) > 200 ||
      rate * (seconds + timeout_ms / 1000.0 + 1) >= RING) {
    fprintf(stderr, "coap-rate-load: -c 1..%d, -r 1..1000000, -d 1.., a path under 200 bytes, and -r x (-d + -t) under %u requests\n",
            MAX_SOCKETS, RING);
    return 2;
  }
  if (!tcp && rate * 247 / 65536 > sockets) {
    fprintf(stderr, "coap-rate-load: %.0f requests/s over %d sockets reuse Message IDs within EXCHANGE_LIFETIME (247 s); use -c %d or more\n",
            rate, sockets, (int)(rate * 247 / 65536) + 1);
    return 2;
  }
  if (tcp && !con) {
    fprintf(stderr, "coap-rate-load: -n has no meaning over TCP (RFC 8323 has no message types)\n");
    return 2;
  }
  struct addrinfo *ai = resolve_udp("coap-rate-load", host, port); /* the same address serves a TCP connect */

  int *fd = calloc((size_t)sockets, sizeof *fd);
  uint16_t *next_mid = calloc((size_t)sockets, sizeof *next_mid);
  uint8_t **input = tcp ? calloc((size_t)sockets, sizeof *input) : NULL;
  size_t *have = tcp ? calloc((size_t)sockets, sizeof *have) : NULL;
  int ep = epoll_create1(0);
  srand((unsigned)now_us());
  raise_open_files((rlim_t)sockets + 16);
  for (int i = 0; i < sockets; i++) {
    /* Connected blocking first, so a TCP connect completes here; non-blocking from then on. */
    fd[i] = socket(ai->ai_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd[i] < 0 || connect(fd[i], ai->ai_addr, ai->ai_addrlen) < 0) {
      perror("coap-rate-load: socket");
      return 2;
    }
    int sz = 1 << 20;
    setsockopt(fd[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    if (tcp) {
      int one = 1;
      setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      input[i] = malloc(TCP_INPUT);
      /* RFC 8323 section 5.3.1: a CSM first, here with no options (the defaults). */
      uint8_t csm[8];
      if (input[i] == NULL || send_all(fd[i], csm, tcp_frame(csm, 0xE1, NULL, 0, NULL, 0)) < 0) {
        perror("coap-rate-load: CSM");
        return 2;
      }
    }
    set_nonblocking(fd[i]);
    next_mid[i] = (uint16_t)rand();
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev) < 0) {
      perror("coap-rate-load: epoll");
      return 2;
    }
  }

  /* The request: header (ver 1, CON or NON, TKL 4), code GET, Message ID, 4-byte token = sequence number, Uri-Path. */
  uint8_t request[300], options[256];
  request[0] = 0x40 | (con ? 0 : 0x10) | 4;
  request[1] = 1;
  size_t options_length = path_options(options, path);
  memcpy(request + 8, options, options_length);
  size_t length = 8 + options_length;

  uint8_t buf[2048];
  struct epoll_event events[256];
  uint64_t sent = 0, ok = 0, bad = 0, answered = 0, max_us = 0, behind_us = 0;
  uint64_t total = (uint64_t)(rate * seconds);
  double interval = 1e6 / rate;
  uint64_t start = now_us() + 1000, sending_end = start + (uint64_t)seconds * 1000000u;
  uint64_t end = sending_end + (uint64_t)timeout_ms * 1000u;
  uint64_t next = 0; /* sequence number of the next request */
  for (;;) {
    uint64_t now = now_us();
    if (now >= end || (next == total && answered == total)) break;

    /* Everything due by now goes out, each stamped with the time it was due. */
    while (next < total) {
      uint64_t due = start + (uint64_t)((double)next * interval);
      if (due > now) break;
      if (now - due > behind_us) behind_us = now - due;
      int s = (int)(next % (uint64_t)sockets);
      uint32_t token = (uint32_t)next;
      due_at[next % RING] = due;
      if (tcp) {
        /* A request waits for room in the socket's buffer rather than being dropped: TCP loses nothing. */
        uint8_t frame[300];
        if (send_all(fd[s], frame, tcp_frame(frame, 1, (const uint8_t *)&token, 4, options, options_length)) < 0) {
          fprintf(stderr, "coap-rate-load: the server closed connection %d\n", s);
          return 2;
        }
        sent++;
      } else {
        uint16_t mid = next_mid[s]++;
        request[2] = (uint8_t)(mid >> 8);
        request[3] = (uint8_t)mid;
        memcpy(request + 4, &token, 4);
        if (send(fd[s], request, length, 0) == (ssize_t)length) sent++;
      }
      next++;
    }

    /* Busy polling (timeout 0): the generator has a core of its own, and a sleep would blur the schedule. */
    int n = epoll_wait(ep, events, 256, 0);
    for (int e = 0; e < n; e++) {
      int s = (int)events[e].data.u32;
      if (tcp) {
        ssize_t got = recv(fd[s], input[s] + have[s], TCP_INPUT - have[s], MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
          fprintf(stderr, "coap-rate-load: the server closed connection %d\n", s);
          return 2;
        }
        if (got < 0) continue;
        have[s] += (size_t)got;
        size_t at = 0;
        for (;;) {
          int code, tkl;
          const uint8_t *token;
          size_t total = tcp_frame_parse(input[s] + at, have[s] - at, &code, &token, &tkl);
          if (total == 0) {
            if (have[s] - at == TCP_INPUT) { fprintf(stderr, "coap-rate-load: a frame over %d bytes\n", TCP_INPUT); return 2; }
            break;
          }
          at += total;
          if (code >> 5 == 7) {
            uint8_t pong[16];
            if (code == 0xE2 && tkl <= 8) send_all(fd[s], pong, tcp_frame(pong, 0xE3, token, tkl, NULL, 0)); /* Ping: Pong */
            continue;
          }
          if (tkl != 4) { bad++; continue; }
          uint32_t sequence;
          memcpy(&sequence, token, 4);
          if (answer(sequence, code, next, &answered, &ok, &bad, &max_us)) continue;
        }
        memmove(input[s], input[s] + at, have[s] - at);
        have[s] -= at;
        continue;
      }
      for (;;) {
        ssize_t got = recv(fd[s], buf, sizeof buf, MSG_DONTWAIT);
        if (got < 0) break;
        if (got < 4 || (buf[0] >> 6) != 1) { bad++; continue; }
        int type = (buf[0] >> 4) & 3;
        if (type == 0) { /* a separate CON response: acknowledge it (RFC 7252 section 5.2.2) */
          uint8_t ack[4] = {0x60, 0, buf[2], buf[3]};
          send(fd[s], ack, 4, 0);
        }
        if (buf[1] == 0) continue; /* the empty ACK before a separate response */
        if ((buf[0] & 0x0f) != 4 || got < 8) { bad++; continue; }
        uint32_t token;
        memcpy(&token, buf + 4, 4);
        answer(token, buf[1], next, &answered, &ok, &bad, &max_us);
      }
    }
  }
  double secs = (double)seconds;
  printf("sent=%llu ok=%llu bad=%llu timeouts=%llu offered=%.0f rps=%.0f p50_us=%llu p99_us=%llu p999_us=%llu max_us=%llu behind_us=%llu\n",
         (unsigned long long)sent, (unsigned long long)ok, (unsigned long long)bad, (unsigned long long)(sent - answered),
         rate, (double)ok / secs, (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.50),
         (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.99), (unsigned long long)percentile(hist, HIST_BUCKETS, 1, 0.999),
         (unsigned long long)max_us, (unsigned long long)behind_us);
  return ok > 0 ? 0 : 1;
}
