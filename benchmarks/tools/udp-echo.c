/*
 * udp-echo: the one-core limit of a CoAP request/response server over UDP, to measure a real server
 * against. It answers every CoAP request with the smallest 2.05 Content the protocol allows (no
 * options, no payload), piggybacked on an ACK with the request's Message ID for a CON and as a NON
 * with a Message ID of its own for a NON (RFC 7252 sections 5.2.1 and 5.2.3), both carrying the
 * request's token. One blocking recvfrom and one sendto per request, on one thread, and no other
 * work: no parsing past the header, no state, no batching (recvmmsg would raise the limit above
 * what a server that answers each request in turn can reach). Its kernel receive buffer is 1 MiB,
 * as CoapNet's server asks for by default (net.core.rmem_max caps it).
 *
 *   udp-echo [port] [address]      (default 5683 on 127.0.0.1; port 0 picks a free one)
 *
 * It prints "udp-echo listening on ADDRESS port PORT" once bound. An empty CON (a CoAP ping) gets an
 * RST (RFC 7252 section 4.3); responses, ACKs, RSTs and anything not CoAP version 1 are ignored.
 *
 * Build: cc -O2 -o udp-echo udp-echo.c
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *address = argc > 2 ? argv[2] : "127.0.0.1";
  char *rest = NULL;
  long port = argc > 1 ? strtol(argv[1], &rest, 10) : 5683;
  if (argc > 3 || (rest && *rest) || port < 0 || port > 65535) {
    fprintf(stderr, "usage: udp-echo [port] [address]\n");
    return 2;
  }

  struct sockaddr_storage local = {0};
  socklen_t local_length;
  struct sockaddr_in *v4 = (struct sockaddr_in *)&local;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&local;
  if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    local_length = sizeof *v4;
  } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    local_length = sizeof *v6;
  } else {
    fprintf(stderr, "udp-echo: '%s' is not an IPv4 or IPv6 address\n", address);
    return 2;
  }
  int fd = socket(local.ss_family, SOCK_DGRAM, 0);
  /* The kernel receive buffer of CoapNet's server (CoapServerOptions.SocketReceiveBufferSize, 1 MiB), so a
   * burst of requests is queued or dropped alike for both; the OS default (208 KiB) drops some of the
   * 1,024 requests that 512 sockets with 2 outstanding each can have in flight. */
  int buffer = 1024 * 1024;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  if (fd < 0 || bind(fd, (struct sockaddr *)&local, local_length) < 0 ||
      getsockname(fd, (struct sockaddr *)&local, &local_length) < 0) {
    perror("udp-echo: bind");
    return 1;
  }
  printf("udp-echo listening on %s port %u\n", address,
         (unsigned)ntohs(local.ss_family == AF_INET ? v4->sin_port : v6->sin6_port));
  fflush(stdout);

  uint8_t in[2048], out[4 + 8];
  uint16_t own_mid = (uint16_t)getpid();
  for (;;) {
    struct sockaddr_storage peer;
    socklen_t peer_length = sizeof peer;
    ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&peer, &peer_length);
    if (n < 4 || (in[0] >> 6) != 1) continue;
    int type = (in[0] >> 4) & 3, tkl = in[0] & 0x0f, code = in[1];
    if (type > 1) continue; /* an ACK or RST: nothing to answer */
    if (code == 0) {
      if (type == 0) { /* a ping: RST with its Message ID */
        uint8_t rst[4] = {0x70, 0x00, in[2], in[3]};
        sendto(fd, rst, sizeof rst, 0, (struct sockaddr *)&peer, peer_length);
      }
      continue;
    }
    if ((code >> 5) != 0 || tkl > 8 || n < 4 + tkl) continue; /* a response, or a malformed token */
    if (type == 0) {
      out[0] = (uint8_t)(0x60 | tkl); /* ACK */
      out[2] = in[2];
      out[3] = in[3];
    } else {
      own_mid++;
      out[0] = (uint8_t)(0x50 | tkl); /* NON */
      out[2] = (uint8_t)(own_mid >> 8);
      out[3] = (uint8_t)own_mid;
    }
    out[1] = 0x45; /* 2.05 Content */
    memcpy(out + 4, in + 4, (size_t)tkl);
    sendto(fd, out, 4 + (size_t)tkl, 0, (struct sockaddr *)&peer, peer_length);
  }
}
