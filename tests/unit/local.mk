# tests/unit -- one CUnit program per API function; tests/unit/NAME.c
# builds tests/unit/NAME with the defaults of tests/local.mk.
# nomem_* fail every fault-injection point (debug builds; SKIP otherwise).
UNIT_TESTS = \
	tests/unit/conn_cfg_delete \
	tests/unit/conn_cfg_get_compl_channel \
	tests/unit/conn_cfg_get_cq_size \
	tests/unit/conn_cfg_get_rcq_size \
	tests/unit/conn_cfg_get_rq_size \
	tests/unit/conn_cfg_get_sq_size \
	tests/unit/conn_cfg_get_srq \
	tests/unit/conn_cfg_get_timeout \
	tests/unit/conn_cfg_new \
	tests/unit/conn_cfg_set_compl_channel \
	tests/unit/conn_cfg_set_cq_size \
	tests/unit/conn_cfg_set_rcq_size \
	tests/unit/conn_cfg_set_rq_size \
	tests/unit/conn_cfg_set_sq_size \
	tests/unit/conn_cfg_set_srq \
	tests/unit/conn_cfg_set_timeout \
	tests/unit/crc32c \
	tests/unit/err_2str \
	tests/unit/ext_errormsg \
	tests/unit/ext_mr_remote_get_transport \
	tests/unit/ext_mr_remote_get_usage \
	tests/unit/log_get_threshold \
	tests/unit/log_set_function \
	tests/unit/log_set_threshold \
	tests/unit/mr_desc_decode \
	tests/unit/mr_desc_encode \
	tests/unit/mr_remote_delete \
	tests/unit/mr_remote_from_descriptor \
	tests/unit/mr_remote_get_flush_type \
	tests/unit/mr_remote_get_size \
	tests/unit/nomem_conn_cfg \
	tests/unit/nomem_mr_remote \
	tests/unit/nomem_peer_cfg \
	tests/unit/nomem_srq_cfg \
	tests/unit/peer_cfg_delete \
	tests/unit/peer_cfg_from_descriptor \
	tests/unit/peer_cfg_get_descriptor \
	tests/unit/peer_cfg_get_descriptor_size \
	tests/unit/peer_cfg_get_direct_write_to_pmem \
	tests/unit/peer_cfg_new \
	tests/unit/peer_cfg_set_direct_write_to_pmem \
	tests/unit/srq_cfg_delete \
	tests/unit/srq_cfg_get_rcq_size \
	tests/unit/srq_cfg_get_rq_size \
	tests/unit/srq_cfg_new \
	tests/unit/srq_cfg_set_rcq_size \
	tests/unit/srq_cfg_set_rq_size \
	tests/unit/utils_conn_event_2str

check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)


# the same CRC-32C cases with lib/crc32c.c compiled in, cutting buffers
# into pieces of 61 bytes for ISA-L; its functions renamed so that they
# never meet the core's copy at link time
check_PROGRAMS += tests/unit/crc32c_small_chunks
TESTS += tests/unit/crc32c_small_chunks
tests_unit_crc32c_small_chunks_SOURCES = tests/unit/crc32c.c lib/crc32c.c
tests_unit_crc32c_small_chunks_CPPFLAGS = $(AM_CPPFLAGS) $(ISAL_CFLAGS) \
	-DRPMA_CRC32C_CHUNK=61 \
	-Drpma_crc32c=small_chunks_crc32c \
	-Drpma_crc32c_shift=small_chunks_crc32c_shift \
	-Drpma_crc32c_xpow8n=small_chunks_crc32c_xpow8n \
	-Drpma_crc32c_mulmod=small_chunks_crc32c_mulmod
tests_unit_crc32c_small_chunks_LDADD = $(LDADD) $(ISAL_LIBS)
