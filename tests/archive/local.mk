# tests/archive -- the archive library (archive/) on a scratch directory:
# records back byte for byte, damage caught and named, gaps, bases and
# retention.  Plain programs: a failed check prints where and exits 1.
EXTRA_DIST += tests/archive/archive_test.h
ARCHIVE_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/archive
ARCHIVE_TEST_LDADD = archive/libarchive.la

check_PROGRAMS += tests/archive/archive_roundtrip
TESTS += tests/archive/archive_roundtrip
tests_archive_archive_roundtrip_CPPFLAGS = $(ARCHIVE_TEST_CPPFLAGS)
tests_archive_archive_roundtrip_LDADD = $(ARCHIVE_TEST_LDADD)

check_PROGRAMS += tests/archive/archive_damage
TESTS += tests/archive/archive_damage
tests_archive_archive_damage_CPPFLAGS = $(ARCHIVE_TEST_CPPFLAGS)
tests_archive_archive_damage_LDADD = $(ARCHIVE_TEST_LDADD)

check_PROGRAMS += tests/archive/archive_retention
TESTS += tests/archive/archive_retention
tests_archive_archive_retention_CPPFLAGS = $(ARCHIVE_TEST_CPPFLAGS)
tests_archive_archive_retention_LDADD = $(ARCHIVE_TEST_LDADD)

# the S3 target's parser of its server's XML answers, without a server
check_PROGRAMS += tests/archive/archive_s3_xml
TESTS += tests/archive/archive_s3_xml
tests_archive_archive_s3_xml_CPPFLAGS = $(ARCHIVE_TEST_CPPFLAGS)
tests_archive_archive_s3_xml_LDADD = $(ARCHIVE_TEST_LDADD)

# the S3 target against a local S3-compatible server (s3rver):
# archive_s3.sh starts it, then runs the three tests above on s3:// and
# archive_s3 (what only S3 has); it skips (77) without s3rver
check_PROGRAMS += tests/archive/archive_s3
tests_archive_archive_s3_CPPFLAGS = $(ARCHIVE_TEST_CPPFLAGS)
tests_archive_archive_s3_LDADD = $(ARCHIVE_TEST_LDADD)
TESTS += tests/archive/archive_s3.sh
EXTRA_DIST += tests/archive/archive_s3.sh tests/archive/s3rver_lib.sh

# the same client's requests through a SigV4 verifier of their own
# (sigv4_proxy.py, in front of s3rver, which checks no signature): each
# signature, x-amz-date, scope and payload hash as S3 checks them, and
# the verifier's refusals (a wrong secret, a region, an altered body)
# named by the client; it skips (77) without s3rver or python3
TESTS += tests/archive/archive_s3_sigv4.sh
EXTRA_DIST += tests/archive/archive_s3_sigv4.sh tests/archive/sigv4_proxy.py
