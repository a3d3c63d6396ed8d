# docs/ -- manual pages of librpmacore and the wire-format specification

# one page per exported function (some are one-line .so redirects to the
# page they share), and the overview in section 7
dist_man_MANS += \
	docs/man/librpmacore.7 \
	docs/man/rpma_conn_cfg_delete.3 \
	docs/man/rpma_conn_cfg_get_compl_channel.3 \
	docs/man/rpma_conn_cfg_get_cq_size.3 \
	docs/man/rpma_conn_cfg_get_rcq_size.3 \
	docs/man/rpma_conn_cfg_get_rq_size.3 \
	docs/man/rpma_conn_cfg_get_sq_size.3 \
	docs/man/rpma_conn_cfg_get_srq.3 \
	docs/man/rpma_conn_cfg_get_timeout.3 \
	docs/man/rpma_conn_cfg_new.3 \
	docs/man/rpma_conn_cfg_set_compl_channel.3 \
	docs/man/rpma_conn_cfg_set_cq_size.3 \
	docs/man/rpma_conn_cfg_set_rcq_size.3 \
	docs/man/rpma_conn_cfg_set_rq_size.3 \
	docs/man/rpma_conn_cfg_set_sq_size.3 \
	docs/man/rpma_conn_cfg_set_srq.3 \
	docs/man/rpma_conn_cfg_set_timeout.3 \
	docs/man/rpma_err_2str.3 \
	docs/man/rpma_ext_errormsg.3 \
	docs/man/rpma_ext_mem_close.3 \
	docs/man/rpma_ext_mem_get_backend.3 \
	docs/man/rpma_ext_mem_get_ptr.3 \
	docs/man/rpma_ext_mem_get_size.3 \
	docs/man/rpma_ext_mem_is_durable.3 \
	docs/man/rpma_ext_mem_open.3 \
	docs/man/rpma_ext_mem_persist.3 \
	docs/man/rpma_ext_mr_remote_get_transport.3 \
	docs/man/rpma_ext_mr_remote_get_usage.3 \
	docs/man/rpma_log_get_threshold.3 \
	docs/man/rpma_log_set_function.3 \
	docs/man/rpma_log_set_threshold.3 \
	docs/man/rpma_mr_remote_delete.3 \
	docs/man/rpma_mr_remote_from_descriptor.3 \
	docs/man/rpma_mr_remote_get_flush_type.3 \
	docs/man/rpma_mr_remote_get_size.3 \
	docs/man/rpma_peer_cfg_delete.3 \
	docs/man/rpma_peer_cfg_from_descriptor.3 \
	docs/man/rpma_peer_cfg_get_descriptor.3 \
	docs/man/rpma_peer_cfg_get_descriptor_size.3 \
	docs/man/rpma_peer_cfg_get_direct_write_to_pmem.3 \
	docs/man/rpma_peer_cfg_new.3 \
	docs/man/rpma_peer_cfg_set_direct_write_to_pmem.3 \
	docs/man/rpma_srq_cfg_delete.3 \
	docs/man/rpma_srq_cfg_get_rcq_size.3 \
	docs/man/rpma_srq_cfg_get_rq_size.3 \
	docs/man/rpma_srq_cfg_new.3 \
	docs/man/rpma_srq_cfg_set_rcq_size.3 \
	docs/man/rpma_srq_cfg_set_rq_size.3 \
	docs/man/rpma_utils_conn_event_2str.3

EXTRA_DIST += docs/wire-format.md

# every exported function has a page; every page renders without warnings
TESTS += tests/man/check-man-pages.sh
EXTRA_DIST += tests/man/check-man-pages.sh
