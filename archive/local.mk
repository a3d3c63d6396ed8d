# archive -- continuous backup: a cluster's committed records cut into
# segments, and bases (a file at an LSN), published on a target (a
# directory, or an S3-compatible object store; the target's functions are
# a table, archive_int.h) and read back for a restore.  The objects'
# format is segment.c's head comment.  Uses libzstd, ISA-L (CRC-32C),
# libcurl and libcrypto (S3's SigV4 and payload hash), nothing of the
# tree below it.
noinst_LTLIBRARIES += archive/libarchive.la
archive_libarchive_la_SOURCES = \
	archive/archive.h archive/archive_int.h \
	archive/fail.c archive/segment.c archive/compress.c archive/names.c \
	archive/target.c archive/target_dir.c archive/target_s3.c \
	archive/s3_int.h archive/s3_request.c \
	archive/s3_xml.c archive/listing.c \
	archive/writer.c archive/reader.c archive/base.c archive/prune.c \
	archive/crc.c archive/file.c
archive_libarchive_la_CPPFLAGS = -I$(top_srcdir)/archive \
	$(ZSTD_CFLAGS) $(ISAL_CFLAGS) $(CURL_CFLAGS) $(SSL_CFLAGS)
archive_libarchive_la_LIBADD = $(ZSTD_LIBS) $(ISAL_LIBS) $(CURL_LIBS) $(SSL_LIBS)
