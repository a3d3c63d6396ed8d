/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_s3_xml.c -- the S3 target's parser of its server's answers
 * (archive/s3_xml.c), without a server: a ListBucketResult page gives
 * its keys, entities decoded, whether more follow and from which token;
 * an Error its Code and Message; anything not well-formed, or outside the
 * subset taken, or missing what a page must have, is refused with why.
 */
#include <stdio.h>
#include <string.h>

#include "archive_int.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define OK(call) do { if ((call) != 0) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, why); } \
	} while (0)

#define HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
#define ROOT "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"

static int
list(const char *doc, struct s3_list_page *pg, char *why, size_t whylen)
{
	why[0] = '\0';
	return s3_list_parse(doc, strlen(doc), pg, why, whylen);
}

/* doc is refused, why holding want */
static void
list_refused(const char *doc, const char *want)
{
	struct s3_list_page pg;
	char why[ARCHIVE_WHY_MAX];
	int rc = list(doc, &pg, why, sizeof(why));

	CHECK(rc == -1 && pg.keys == NULL && pg.n == 0 && strstr(why, want) != NULL);
	if (rc != -1 || strstr(why, want) == NULL)
		fprintf(stderr, "  \"%s\": rc %d, why \"%s\", not \"%s\"\n", doc, rc, why,
			want);
	if (rc == 0)
		s3_list_page_free(&pg);
}

static void
pages(void)
{
	struct s3_list_page pg;
	char why[ARCHIVE_WHY_MAX];

	OK(list(HEAD ROOT "<Name>b</Name><Prefix>p/seg/</Prefix><KeyCount>2</KeyCount>"
		"<MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>\n"
		"  <Contents><Key>p/seg/a&amp;b</Key><Size>10</Size>"
		"<Owner><ID>x</ID></Owner></Contents>\n"
		"  <Contents>\n    <Key>p/seg/&#x41;&#66;&lt;&gt;&quot;&apos;\xc3\xa9</Key>\n"
		"  </Contents>\n"
		"<NextContinuationToken>1/a+b=</NextContinuationToken>"
		"</ListBucketResult>\n", &pg, why, sizeof(why)));
	CHECK(pg.n == 2 && pg.truncated && pg.next_token != NULL);
	if (pg.n == 2 && pg.next_token != NULL) {
		CHECK(strcmp(pg.keys[0], "p/seg/a&b") == 0);
		CHECK(strcmp(pg.keys[1], "p/seg/AB<>\"'\xc3\xa9") == 0);
		CHECK(strcmp(pg.next_token, "1/a+b=") == 0);
	}
	s3_list_page_free(&pg);

	/* the last page, and an empty one */
	OK(list(ROOT "<IsTruncated>false</IsTruncated><Contents><Key>k</Key></Contents>"
		"</ListBucketResult>", &pg, why, sizeof(why)));
	CHECK(pg.n == 1 && !pg.truncated && pg.next_token == NULL);
	s3_list_page_free(&pg);
	OK(list("<ListBucketResult><IsTruncated>false</IsTruncated><Prefix/>"
		"</ListBucketResult>", &pg, why, sizeof(why)));
	CHECK(pg.n == 0 && !pg.truncated);
	s3_list_page_free(&pg);

	list_refused("", "no root element");
	list_refused(HEAD, "no root element");
	list_refused("<Error><Code>X</Code></Error>", "not a ListBucketResult");
	list_refused("<ListBucketResult></ListBucketResult>", "without IsTruncated");
	list_refused("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
		"without a NextContinuationToken");
	list_refused("<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>",
		"neither true nor false");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<IsTruncated>false</IsTruncated></ListBucketResult>", "twice");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents><Size>1</Size></Contents></ListBucketResult>", "0 Key");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents><Key>a</Key><Key>b</Key></Contents></ListBucketResult>", "2 Key");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents><Key></Key></Contents></ListBucketResult>", "a Key empty");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents><Key>a&#10;b</Key></Contents></ListBucketResult>", "control");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents/></ListBucketResult>", "no Key");
	/* not well-formed, or outside the subset taken */
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>",
		"ends inside an element");
	list_refused("<ListBucketResult><IsTruncated>false</Truncated></ListBucketResult>",
		"does not match");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"
		"<x/>", "more after the root element");
	list_refused("<ListBucketResult>text<IsTruncated>false</IsTruncated>"
		"</ListBucketResult>", "text beside child elements");
	list_refused("<ListBucketResult><IsTruncated>false</IsTruncated>tail"
		"</ListBucketResult>", "text beside child elements");
	list_refused("<ListBucketResult><!-- c --><IsTruncated>false</IsTruncated>"
		"</ListBucketResult>", "comment");
	list_refused("<ListBucketResult><IsTruncated><![CDATA[false]]></IsTruncated>"
		"</ListBucketResult>", "CDATA");
	list_refused("<!DOCTYPE x><ListBucketResult/>", "no root element");
	list_refused("<ListBucketResult><IsTruncated>&nbsp;</IsTruncated>"
		"</ListBucketResult>", "unknown entity");
	list_refused("<ListBucketResult><IsTruncated>&#0;</IsTruncated>"
		"</ListBucketResult>", "to no character");
	list_refused("<ListBucketResult><IsTruncated>&#xD800;</IsTruncated>"
		"</ListBucketResult>", "to no character");
	list_refused("<ListBucketResult><IsTruncated>&#12</IsTruncated>"
		"</ListBucketResult>", "bad character reference");
	list_refused("<ListBucketResult a=1><IsTruncated>false</IsTruncated>"
		"</ListBucketResult>", "not quoted");
	list_refused("<ListBucketResult a=\"1\"b=\"2\"><IsTruncated>false</IsTruncated>"
		"</ListBucketResult>", "no space before an attribute");
	list_refused("<1a></1a>", "bad element name");
	{
		/* nested past the depth taken */
		char deep[2000] = "<ListBucketResult>";

		for (int i = 0; i < 20; i++)
			strcat(deep, "<a>");
		list_refused(deep, "nested too deep");
	}
}

static void
error_docs(void)
{
	char code[64], msg[200];
	const char *doc = HEAD "<Error><Code>NoSuchKey</Code><Message>The specified key "
		"does not exist.</Message><Key>a/b</Key><RequestId>1</RequestId></Error>";

	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == 0);
	CHECK(strcmp(code, "NoSuchKey") == 0 &&
		strcmp(msg, "The specified key does not exist.") == 0);
	doc = "<Error><Code>SlowDown</Code></Error>";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == 0);
	CHECK(strcmp(code, "SlowDown") == 0 && msg[0] == '\0');
	/* control characters are not passed on into an error's sentence */
	doc = "<Error><Code>X</Code><Message>a&#27;[31mb</Message></Error>";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == 0);
	CHECK(strcmp(msg, "a?[31mb") == 0);
	/* a code that does not fit is cut, not overrun */
	doc = "<Error><Code>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"</Code></Error>";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == 0);
	CHECK(strlen(code) == sizeof(code) - 1);
	/* not an error document: no code */
	doc = "<html><body>502 Bad Gateway</body></html>";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == -1);
	CHECK(code[0] == '\0' && msg[0] == '\0');
	doc = "<Error><Message>m</Message></Error>";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == -1);
	doc = "<Error><Code>A</Code><Code>B</Code></Error>";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == -1);
	doc = "Internal Server Error";
	CHECK(s3_error_parse(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg)) == -1);
}

int
main(void)
{
	pages();
	error_docs();
	if (failures > 0) {
		printf("archive_s3_xml: %d failures\n", failures);
		return 1;
	}
	printf("archive_s3_xml: ok\n");
	return 0;
}
