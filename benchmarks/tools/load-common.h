/*
 * load-common.h: what the CoAP load generators in this folder share: a monotonic clock in
 * microseconds, the Uri-Path options of a path (RFC 7252 section 3.1), and percentiles from a
 * histogram of latencies.
 */
#ifndef COAPNET_LOAD_COMMON_H
#define COAPNET_LOAD_COMMON_H

#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

#endif
