/*
 * tcp-echo: the one-core limit of a CoAP-over-TCP (RFC 8323) request/response server, the TCP twin of udp-echo.c, to
 * measure a real server against. It answers every request frame with the smallest 2.05 Content the protocol allows (no
 * options, no payload) carrying the request's token, a CSM with an empty CSM (RFC 8323 section 5.3.1, every option at
 * its default) and a Ping with a Pong (section 5.4); other signals are skipped. One thread, level-triggered epoll over
 * the listener and every connection; per ready connection one recv and one send of all the responses its bytes asked
 * for, so a pipelined connection's requests share a send the way a real server can share them, and a connection with
 * one request in flight pays a recv and a send per request: the kernel's part of a request, and nothing above it.
 *
 *   tcp-echo [port] [address]      (default 5683 on 127.0.0.1; port 0 picks a free one)
 *
 * It prints "tcp-echo listening on ADDRESS port PORT" once bound. A frame it cannot parse, or more than 64 KiB of
 * unparsed input, closes that connection.
 *
 * Build: cc -O2 -o tcp-echo tcp-echo.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load-common.h"

#define INPUT 65536
#define OUTPUT 262144
#define MAX_EVENTS 256

typedef struct {
  int fd;
  size_t have;
  uint8_t in[INPUT];
} conn_t;

static uint8_t out[OUTPUT];

/* Answers every whole frame in c->in; returns how many bytes it consumed, or -1 when a frame is malformed. */
static ssize_t answer(conn_t *c, size_t *n_out) {
  size_t at = 0;
  while (at < c->have) {
    int code, tkl;
    const uint8_t *token;
    if ((c->in[at] & 0x0F) > 8) return -1; /* TKL 9-15: a message format error (RFC 8323 section 3.2) */
    size_t total = tcp_frame_parse(c->in + at, c->have - at, &code, &token, &tkl);
    if (total == 0) break; /* the rest of a frame is still to come */
    at += total;
    if (*n_out > OUTPUT - 64) return -1; /* a peer that pipelines more than this in one read is not a benchmark */
    if (code == 0xE1) *n_out += tcp_frame(out + *n_out, 0xE1, NULL, 0, NULL, 0);               /* CSM */
    else if (code == 0xE2) *n_out += tcp_frame(out + *n_out, 0xE3, token, tkl, NULL, 0);       /* Ping: Pong */
    else if (code >= 1 && code <= 31) *n_out += tcp_frame(out + *n_out, 0x45, token, tkl, NULL, 0); /* 2.05 */
  }
  return (ssize_t)at;
}

int main(int argc, char **argv) {
  const char *address = argc > 2 ? argv[2] : "127.0.0.1";
  char *rest = NULL;
  long port = argc > 1 ? strtol(argv[1], &rest, 10) : 5683;
  struct sockaddr_in local = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (argc > 3 || (rest && *rest) || port < 0 || port > 65535 || inet_pton(AF_INET, address, &local.sin_addr) != 1) {
    fprintf(stderr, "usage: tcp-echo [port] [IPv4 address]\n");
    return 2;
  }
  raise_open_files(4096);
  int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t length = sizeof local;
  if (bind(listener, (struct sockaddr *)&local, sizeof local) < 0 || listen(listener, 4096) < 0 ||
      getsockname(listener, (struct sockaddr *)&local, &length) < 0) {
    perror("tcp-echo: bind");
    return 2;
  }
  printf("tcp-echo listening on %s port %d\n", address, ntohs(local.sin_port));
  fflush(stdout);

  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}, events[MAX_EVENTS];
  epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
  for (;;) {
    int n = epoll_wait(ep, events, MAX_EVENTS, -1);
    if (n < 0 && errno != EINTR) { perror("tcp-echo: epoll_wait"); return 1; }
    for (int e = 0; e < n; e++) {
      if (events[e].data.ptr == NULL) {
        int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = calloc(1, sizeof *c);
        c->fd = fd;
        struct epoll_event add = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &add);
        continue;
      }
      conn_t *c = events[e].data.ptr;
      ssize_t got = recv(c->fd, c->in + c->have, INPUT - c->have, 0);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      size_t n_out = 0;
      ssize_t used = -1;
      if (got > 0) {
        c->have += (size_t)got;
        used = answer(c, &n_out);
      }
      if (used < 0 || (used == 0 && c->have == INPUT) || (n_out && send_all(c->fd, out, n_out) < 0)) {
        close(c->fd); /* the peer closed, failed, or sent what is not CoAP over TCP */
        free(c);
        continue;
      }
      memmove(c->in, c->in + used, c->have - (size_t)used);
      c->have -= (size_t)used;
    }
  }
}
