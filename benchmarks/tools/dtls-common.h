/*
 * dtls-common.h: what the coaps load generators in this folder (coap-dtls-load.c, coap-fleet.c) share: the OpenSSL
 * context of a DTLS 1.2 client with a pre-shared key (RFC 7252 section 9.1.3.1). Apart from load-common.h so that the
 * plain UDP and TCP tools build without OpenSSL's headers.
 */
#ifndef COAPNET_DTLS_COMMON_H
#define COAPNET_DTLS_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

/* A DTLS 1.2 client context offering ciphers (an OpenSSL cipher list), its PSK from psk; exits with status 2, naming
 * tool, when OpenSSL refuses it. */
static inline SSL_CTX *dtls_psk_client_ctx(const char *tool, const char *ciphers, SSL_psk_client_cb_func psk) {
  SSL_CTX *ctx = SSL_CTX_new(DTLS_client_method());
  if (!ctx) {
    fprintf(stderr, "%s: SSL_CTX_new\n", tool);
    ERR_print_errors_fp(stderr);
    exit(2);
  }
  SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION);
  /* Security level 0: OpenSSL counts a CCM_8 suite's 64-bit tag against it, and CCM_8 is what RFC 7252 mandates. */
  char list[512];
  snprintf(list, sizeof list, "%s:@SECLEVEL=0", ciphers);
  if (SSL_CTX_set_cipher_list(ctx, list) != 1) {
    fprintf(stderr, "%s: no such cipher list (-C %s)\n", tool, ciphers);
    ERR_print_errors_fp(stderr);
    exit(2);
  }
  SSL_CTX_set_psk_client_callback(ctx, psk);
  /* DTLS reads a whole datagram at a time. */
  SSL_CTX_set_read_ahead(ctx, 1);
  return ctx;
}

#endif
