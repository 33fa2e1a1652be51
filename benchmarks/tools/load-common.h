/*
 * load-common.h: what the CoAP load generators in this folder share: a monotonic clock in
 * microseconds, the Uri-Path options of a path (RFC 7252 section 3.1), percentiles from a
 * histogram of latencies, and CoAP-over-TCP frames (RFC 8323 section 3.2).
 */
#ifndef COAPNET_LOAD_COMMON_H
#define COAPNET_LOAD_COMMON_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

static inline uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + ts.tv_nsec / 1000u;
}

/* Uri-Path options (option 11, one per segment) for path; returns their length. */
static inline size_t path_options(uint8_t *buf, const char *path) {
  size_t n = 0;
  unsigned prev = 0;
  const char *p = path;
  while (*p == '/') p++;
  while (*p) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    unsigned delta = 11 - prev;
    prev = 11;
    if (len < 13) {
      buf[n++] = (uint8_t)(delta << 4 | len);
    } else {
      buf[n++] = (uint8_t)(delta << 4 | 13);
      buf[n++] = (uint8_t)(len - 13);
    }
    memcpy(buf + n, p, len);
    n += len;
    p += len;
    while (*p == '/') p++;
  }
  return n;
}

/* The upper edge of the bucket holding the given share (0..1) of the samples; buckets are width units wide. */
static inline uint64_t percentile(const uint64_t *hist, int buckets, uint64_t width, double share) {
  uint64_t total = 0, acc = 0;
  for (int b = 0; b < buckets; b++) total += hist[b];
  if (total == 0) return 0;
  for (int b = 0; b < buckets; b++) {
    acc += hist[b];
    if ((double)acc >= share * (double)total) return (uint64_t)(b + 1) * width;
  }
  return (uint64_t)buckets * width;
}

/* Raises the soft limit on open files to need (a socket per client): past the hard limit too when the process may
 * (root, up to /proc/sys/fs/nr_open), else as far as the hard limit allows. */
static inline void raise_open_files(rlim_t need) {
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < need) {
    if (files.rlim_max < need) {
      struct rlimit both = {need, need};
      if (setrlimit(RLIMIT_NOFILE, &both) == 0) return;
    }
    files.rlim_cur = files.rlim_max < need ? files.rlim_max : need;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

/* The UDP address of host and port (IPv4 or IPv6); exits with status 2, naming tool, when it cannot be resolved. */
static inline struct addrinfo *resolve_udp(const char *tool, const char *host, const char *port) {
  struct addrinfo hints = {0}, *found = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(host, port, &hints, &found) != 0) {
    fprintf(stderr, "%s: cannot resolve %s port %s\n", tool, host, port);
    exit(2);
  }
  return found;
}

/* One RFC 8323 section 3.2 frame: Len|TKL, extended length, code, token, options; returns its length. */
static inline size_t tcp_frame(uint8_t *buf, int code, const uint8_t *token, int tkl, const uint8_t *options, size_t length) {
  size_t n = 0;
  if (length < 13) {
    buf[n++] = (uint8_t)(length << 4 | tkl);
  } else if (length < 269) {
    buf[n++] = (uint8_t)(13 << 4 | tkl);
    buf[n++] = (uint8_t)(length - 13);
  } else {
    buf[n++] = (uint8_t)(14 << 4 | tkl);
    buf[n++] = (uint8_t)((length - 269) >> 8);
    buf[n++] = (uint8_t)(length - 269);
  }
  buf[n++] = (uint8_t)code;
  if (tkl > 0) memcpy(buf + n, token, (size_t)tkl);
  n += (size_t)tkl;
  if (length > 0) memcpy(buf + n, options, length);
  return n + length;
}

/*
 * The frame at f, of which have bytes are there: its whole length, code and token (RFC 8323 section 3.2). 0 when it
 * is not all there yet.
 */
static inline size_t tcp_frame_parse(const uint8_t *f, size_t have, int *code, const uint8_t **token, int *tkl) {
  if (have < 2) return 0;
  size_t len = f[0] >> 4, ext = 0;
  if (len == 13) ext = 1;
  else if (len == 14) ext = 2;
  else if (len == 15) ext = 4;
  if (have < 1 + ext + 1) return 0;
  if (ext == 1) len = 13 + f[1];
  else if (ext == 2) len = 269 + ((size_t)f[1] << 8 | f[2]);
  else if (ext == 4) len = 65805 + ((size_t)f[1] << 24 | (size_t)f[2] << 16 | (size_t)f[3] << 8 | f[4]);
  *tkl = f[0] & 0x0f;
  size_t total = 1 + ext + 1 + (size_t)*tkl + len;
  if (have < total) return 0;
  *code = f[1 + ext];
  *token = f + 2 + ext;
  return total;
}

/* Sends all of buf on a stream socket, waiting (100 ms at a time) while the socket's buffer is full; -1 on an error. */
static inline int send_all(int fd, const uint8_t *buf, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd p = {fd, POLLOUT, 0};
        poll(&p, 1, 100);
        continue;
      }
      return -1;
    }
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

#endif
