/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_b64.c -- base64 (RFC 4648 section 4, with padding) for etcd's keys
 * and values.
 *
 * Our own, not OpenSSL's EVP_DecodeBlock: that one skips whitespace, takes
 * a string without its padding and answers a length that counts the
 * padding, so two different strings could name one key.  Go's encoder
 * (etcd's) writes exactly one canonical string per byte sequence, and this
 * decoder takes only that string.
 */
#include <string.h>

#include "coord/etcd_msg.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
etcd_b64_len(size_t len)
{
	return (len + 2) / 3 * 4;
}

void
etcd_b64_encode(const uint8_t *in, size_t len, char *out)
{
	size_t i = 0;

	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = alphabet[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = '=';
		*out++ = '=';
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = '=';
	}
	*out = '\0';
}

/* the 6-bit value of c, or -1 */
static int
sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long
etcd_b64_decode(const char *in, size_t len, uint8_t *out, const char **why)
{
	size_t o = 0;

	if (len % 4 != 0) {
		*why = "base64: length not a multiple of 4";
		return -1;
	}
	for (size_t i = 0; i < len; i += 4) {
		int s[4];
		int pad = 0;
		bool last = i + 4 == len;

		for (int k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)in[i + k];

			if (c == '=' && last && k >= 2) {
				s[k] = 0;
				pad++;
				continue;
			}
			/* '=' then a letter, or '=' before the last quantum */
			if (pad > 0 || c == '=') {
				*why = "base64: padding before the end";
				return -1;
			}
			if ((s[k] = sextet(c)) < 0) {
				*why = "base64: a byte outside the alphabet";
				return -1;
			}
		}
		uint32_t v = (uint32_t)s[0] << 18 | (uint32_t)s[1] << 12 |
			(uint32_t)s[2] << 6 | (uint32_t)s[3];

		/* bits under the padding must be zero: one string per value */
		if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) {
			*why = "base64: nonzero bits under the padding";
			return -1;
		}
		out[o++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)v;
	}
	return (long)o;
}
