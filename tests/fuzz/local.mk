# tests/fuzz -- libFuzzer targets for every parser of untrusted bytes.
#   make fuzz FUZZ_SECONDS=600     runs each target that long (default 60)
# They are built with clang directly (not libtool) because libFuzzer needs
# clang whatever CC is; the core's sources are compiled into each target.

FUZZ_SECONDS = 60
FUZZ_JOBS = 1
FUZZ_TARGETS = mr_remote_from_descriptor peer_cfg_from_descriptor wal_open
FUZZ_DIR = fuzz-out
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_builddir) -I$(top_srcdir)/rpma/include -I$(top_srcdir)/rpma \
	-I$(top_srcdir)/lib -I$(top_srcdir)/engine -I$(top_srcdir)/engine/include \
	$(IBVERBS_CFLAGS)
# only the parsers and what they call: the targets need no transport
FUZZ_CORE_SRC = $(top_srcdir)/lib/crc32c.c \
	$(addprefix $(top_srcdir)/rpma/,descriptor.c err.c \
	fault_injection.c log.c log_default.c mr_remote.c peer_cfg.c)

EXTRA_DIST += $(FUZZ_TARGETS:%=tests/fuzz/fuzz_%.c)

$(FUZZ_DIR)/fuzz_mr_remote_from_descriptor: \
		tests/fuzz/fuzz_mr_remote_from_descriptor.c $(FUZZ_CORE_SRC)
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) $(ISAL_CFLAGS) -o $@ $^ $(ISAL_LIBS)

# the log's recovery and its peer floors: the log and the memory
# interface, no backend
# (fault.c and lock_rank.c: a debug build's fault points and lock ranks)
$(FUZZ_DIR)/fuzz_wal_open: tests/fuzz/fuzz_wal_open.c $(top_srcdir)/engine/log/wal.c \
		$(top_srcdir)/engine/log/wal_read.c $(top_srcdir)/engine/log/wal_probe.c \
		$(top_srcdir)/engine/log/wal_format.c $(top_srcdir)/engine/log/wal_hdr.c $(top_srcdir)/engine/log/peer_floor.c \
		$(top_srcdir)/engine/common/fault.c $(top_srcdir)/engine/common/lock_rank.c \
		$(FUZZ_CORE_SRC)
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/engine \
		-o $@ $^ $(top_srcdir)/rpma/mem.c $(top_srcdir)/rpma/mem_file.c \
		$(top_srcdir)/rpma/mem_pmem.c $(PMEM2_CFLAGS) $(PMEM2_LIBS) \
		$(ISAL_CFLAGS) $(ISAL_LIBS)

$(FUZZ_DIR)/fuzz_peer_cfg_from_descriptor: \
		tests/fuzz/fuzz_peer_cfg_from_descriptor.c $(FUZZ_CORE_SRC)
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) $(ISAL_CFLAGS) -o $@ $^ $(ISAL_LIBS)

# the admin socket's request parser meets arbitrary bytes (make fuzz)
FUZZ_TARGETS += admin_req
EXTRA_DIST += tests/fuzz/fuzz_admin_req.c
$(FUZZ_DIR)/fuzz_admin_req: tests/fuzz/fuzz_admin_req.c \
		$(top_srcdir)/admin/admin_req.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/admin -o $@ $^

# replctl's reader of the daemon's replies (jansson) meets arbitrary bytes
# (make fuzz); jansson is the system's, not instrumented for coverage
FUZZ_TARGETS += json_in
EXTRA_DIST += tests/fuzz/fuzz_json_in.c
$(FUZZ_DIR)/fuzz_json_in: tests/fuzz/fuzz_json_in.c \
		$(top_srcdir)/tools/replctl/json_in.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/tools/replctl \
		$(JANSSON_CFLAGS) -o $@ $^ $(JANSSON_LIBS)

fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)

# Each target runs FUZZ_SECONDS from a corpus kept in $(FUZZ_DIR); a crash
# leaves its input there (crash-*) and fails the rule.
fuzz: fuzz-build
	@test -n "$(CLANG)" || { echo "fuzz: clang not found (apt-get install clang libclang-rt-14-dev)"; exit 1; }
	@set -e; for t in $(FUZZ_TARGETS); do \
		$(MKDIR_P) $(FUZZ_DIR)/corpus-$$t; \
		printf '\001' > $(FUZZ_DIR)/corpus-$$t/seed-one; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$t- \
			$(FUZZ_DIR)/corpus-$$t 2> $(FUZZ_DIR)/$$t.log \
			|| { tail -n 40 $(FUZZ_DIR)/$$t.log; exit 1; }; \
		grep -E '^(Done|stat::number_of_executed_units)' $(FUZZ_DIR)/$$t.log; \
	done

clean-local: clean-fuzz
clean-fuzz:
	-rm -rf $(FUZZ_DIR)

.PHONY: fuzz fuzz-build clean-fuzz

# the control channel's decoder: bytes straight from a TCP peer
FUZZ_TARGETS += ctl_msg
$(FUZZ_DIR)/fuzz_ctl_msg: tests/fuzz/fuzz_ctl_msg.c $(top_srcdir)/engine/ctl/ctl_msg.c \
		$(top_srcdir)/engine/common/membership.c $(top_srcdir)/lib/crc32c.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/engine $(ISAL_CFLAGS) \
		-o $@ $^ $(ISAL_LIBS)

# the etcd client's answers (ha/coord/): etcd's bytes are untrusted;
# jansson is the system's, not instrumented for coverage
FUZZ_TARGETS += etcd_msg
EXTRA_DIST += tests/fuzz/fuzz_etcd_msg.c
$(FUZZ_DIR)/fuzz_etcd_msg: tests/fuzz/fuzz_etcd_msg.c \
		$(top_srcdir)/ha/coord/etcd_msg.c $(top_srcdir)/ha/coord/etcd_b64.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/ha $(JANSSON_CFLAGS) $(SSL_CFLAGS) \
		-o $@ $^ $(JANSSON_LIBS) $(SSL_LIBS)

# replvfs's transaction records as a log or a peer holds them
FUZZ_TARGETS += txn_record
EXTRA_DIST += tests/fuzz/fuzz_txn_record.c
$(FUZZ_DIR)/fuzz_txn_record: tests/fuzz/fuzz_txn_record.c \
		$(top_srcdir)/sqlite/txn_record.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/sqlite -o $@ $^

# replvfs's image records (a primary's file, for a copy remade) as a log
# holds them
FUZZ_TARGETS += image_record
EXTRA_DIST += tests/fuzz/fuzz_image_record.c
$(FUZZ_DIR)/fuzz_image_record: tests/fuzz/fuzz_image_record.c \
		$(top_srcdir)/sqlite/image_record.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/sqlite -o $@ $^

# the coordinator's key values as etcd holds them (ha/coord_keys.c)
FUZZ_TARGETS += coord_keys
EXTRA_DIST += tests/fuzz/fuzz_coord_keys.c
$(FUZZ_DIR)/fuzz_coord_keys: tests/fuzz/fuzz_coord_keys.c \
		$(top_srcdir)/ha/coord_keys.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/ha \
		-I$(top_srcdir)/engine -I$(top_srcdir)/engine/include $(JANSSON_CFLAGS) \
		-o $@ $^ $(JANSSON_LIBS)

# the targets build and run briefly in make check, so that none rots
TESTS += tests/fuzz/fuzz_targets.sh
EXTRA_DIST += tests/fuzz/fuzz_targets.sh

# the archive's segments and bases as a target holds them (archive/);
# libzstd is the system's, not instrumented for coverage
FUZZ_TARGETS += archive_segment
EXTRA_DIST += tests/fuzz/fuzz_archive_segment.c
$(FUZZ_DIR)/fuzz_archive_segment: tests/fuzz/fuzz_archive_segment.c \
		$(top_srcdir)/archive/segment.c $(top_srcdir)/archive/compress.c \
		$(top_srcdir)/archive/fail.c $(top_srcdir)/archive/crc.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/archive $(ZSTD_CFLAGS) \
		$(ISAL_CFLAGS) -o $@ $^ $(ZSTD_LIBS) $(ISAL_LIBS)

# the S3 target's parser of its server's XML answers (archive/s3_xml.c)
FUZZ_TARGETS += s3_xml
EXTRA_DIST += tests/fuzz/fuzz_s3_xml.c
$(FUZZ_DIR)/fuzz_s3_xml: tests/fuzz/fuzz_s3_xml.c $(top_srcdir)/archive/s3_xml.c \
		$(top_srcdir)/archive/fail.c
	@$(MKDIR_P) $(FUZZ_DIR)
	$(AM_V_CC)$(CLANG) $(FUZZ_FLAGS) -I$(top_srcdir)/archive -o $@ $^
