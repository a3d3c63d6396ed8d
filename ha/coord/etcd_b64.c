/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_b64.c -- base64 (RFC 4648 section 4, with padding) for etcd's keys
 * and values, through OpenSSL's EVP_EncodeBlock and EVP_DecodeBlock.
 *
 * Decoding is strict, because etcd's answers are untrusted and one key
 * must have one spelling: Go's encoder (etcd's) writes exactly one string
 * per byte sequence, and only that string is taken.  EVP_DecodeBlock alone
 * is looser: it skips leading and trailing whitespace, takes '=' anywhere
 * as a zero sextet, ignores the bits under the padding, and counts the
 * padding as decoded zero bytes.  So the text is checked first (alphabet,
 * length, where '=' may stand), the bits under the padding are checked on
 * what EVP_DecodeBlock wrote, and the padding is taken off its length.
 */
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>

#include "coord/etcd_msg.h"

/*
 * EVP_*Block take an int length: longer inputs go through in pieces of
 * whole quanta (3 bytes in, 4 characters out), so no padding falls inside.
 * Nothing near this size reaches here (etcd's answers are bounded far
 * lower, ETCD_*_MAX); the pieces keep the functions total all the same.
 */
#define B64_PIECE_BYTES ((size_t)3 << 28)
#define B64_PIECE_TEXT (B64_PIECE_BYTES / 3 * 4)
_Static_assert(B64_PIECE_TEXT <= INT_MAX, "EVP_*Block's length is an int");

size_t
etcd_b64_len(size_t len)
{
	return (len + 2) / 3 * 4;
}

void
etcd_b64_encode(const uint8_t *in, size_t len, char *out)
{
	while (len > B64_PIECE_BYTES) {
		EVP_EncodeBlock((unsigned char *)out, in, (int)B64_PIECE_BYTES);
		in += B64_PIECE_BYTES;
		len -= B64_PIECE_BYTES;
		out += B64_PIECE_TEXT;
	}
	/* writes the terminating '\0' */
	EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

/* c is in the standard alphabet (never '=', never '\0') */
static bool
in_alphabet(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		(c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* text: whole quanta of the alphabet, '=' at most at its very end */
static bool
decode_piece(const char *text, size_t len, uint8_t *out, const char **why)
{
	int got = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);

	/* not expected after the checks; kept so that no surprise passes */
	if (got < 0 || (size_t)got != len / 4 * 3) {
		*why = "base64: refused by the decoder";
		return false;
	}
	return true;
}

long
etcd_b64_decode(const char *in, size_t len, uint8_t *out, const char **why)
{
	size_t pad = 0, n = 0;

	if (len % 4 != 0) {
		*why = "base64: length not a multiple of 4";
		return -1;
	}
	if (len / 4 * 3 > LONG_MAX) {
		*why = "base64: too long";
		return -1;
	}
	while (pad < 2 && pad < len && in[len - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < len - pad; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '=') {
			*why = "base64: padding before the end";
			return -1;
		}
		if (!in_alphabet(c)) {
			*why = "base64: a byte outside the alphabet";
			return -1;
		}
	}
	/*
	 * Now only the alphabet and, at the very end, one or two '='.  The
	 * last quantum goes through a buffer of its own: EVP_DecodeBlock
	 * writes 3 bytes for it whatever the padding, and out need only hold
	 * what the text decodes to, as before.
	 */
	size_t body = len == 0 ? 0 : len - 4;
	uint8_t last[3];

	while (n < body) {
		size_t piece = body - n < B64_PIECE_TEXT ? body - n : B64_PIECE_TEXT;

		if (!decode_piece(in + n, piece, out + n / 4 * 3, why))
			return -1;
		n += piece;
	}
	if (len == 0)
		return 0;
	if (!decode_piece(in + body, 4, last, why))
		return -1;
	/* bits under the padding must be zero: one string per value */
	if ((pad >= 1 && last[2] != 0) || (pad == 2 && last[1] != 0)) {
		*why = "base64: nonzero bits under the padding";
		return -1;
	}
	memcpy(out + body / 4 * 3, last, 3 - pad);
	return (long)(body / 4 * 3 + 3 - pad);
}
