# docs/ -- manual pages of librpmacore and the wire-format specification

# one page per exported function (some are one-line .so redirects to the
# page they share), and the overview in section 7
dist_man_MANS += \
	docs/man/librpmacore.7 \
	docs/man/rpma_atomic_write.3 \
	docs/man/rpma_conn_apply_remote_peer_cfg.3 \
	docs/man/rpma_conn_cfg_delete.3 \
	docs/man/rpma_ext_conn_cfg_get_gpspm.3 \
	docs/man/rpma_ext_conn_cfg_set_gpspm.3 \
	docs/man/rpma_ext_conn_cfg_get_polled.3 \
	docs/man/rpma_ext_conn_cfg_set_polled.3 \
	docs/man/rpma_ext_conn_set_epoch.3 \
	docs/man/rpma_ext_peer_fence.3 \
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
	docs/man/rpma_conn_delete.3 \
	docs/man/rpma_conn_disconnect.3 \
	docs/man/rpma_conn_get_compl_fd.3 \
	docs/man/rpma_conn_get_cq.3 \
	docs/man/rpma_conn_get_event_fd.3 \
	docs/man/rpma_conn_get_private_data.3 \
	docs/man/rpma_conn_get_qp_num.3 \
	docs/man/rpma_conn_get_rcq.3 \
	docs/man/rpma_conn_next_event.3 \
	docs/man/rpma_conn_req_connect.3 \
	docs/man/rpma_conn_req_delete.3 \
	docs/man/rpma_conn_req_get_private_data.3 \
	docs/man/rpma_conn_req_new.3 \
	docs/man/rpma_conn_req_recv.3 \
	docs/man/rpma_conn_wait.3 \
	docs/man/rpma_cq_get_fd.3 \
	docs/man/rpma_cq_get_wc.3 \
	docs/man/rpma_cq_wait.3 \
	docs/man/rpma_ep_get_fd.3 \
	docs/man/rpma_ep_listen.3 \
	docs/man/rpma_ep_next_conn_req.3 \
	docs/man/rpma_ep_shutdown.3 \
	docs/man/rpma_err_2str.3 \
	docs/man/rpma_ext_conn_get_flush_method.3 \
	docs/man/rpma_ext_cq_poll.3 \
	docs/man/rpma_ext_write_flush.3 \
	docs/man/rpma_ext_errormsg.3 \
	docs/man/rpma_ext_log.3 \
	docs/man/rpma_ext_mem_close.3 \
	docs/man/rpma_ext_mem_get_backend.3 \
	docs/man/rpma_ext_mem_get_health.3 \
	docs/man/rpma_ext_mem_get_stats.3 \
	docs/man/rpma_ext_mem_get_ptr.3 \
	docs/man/rpma_ext_mem_get_size.3 \
	docs/man/rpma_ext_mem_is_durable.3 \
	docs/man/rpma_ext_mem_memcpy.3 \
	docs/man/rpma_ext_mem_open.3 \
	docs/man/rpma_ext_mem_persist.3 \
	docs/man/rpma_ext_mr_reg_mem.3 \
	docs/man/rpma_ext_mr_remote_get_transport.3 \
	docs/man/rpma_ext_mr_remote_get_usage.3 \
	docs/man/rpma_ext_peer_get_transport.3 \
	docs/man/rpma_ext_peer_new_ofi.3 \
	docs/man/rpma_flush.3 \
	docs/man/rpma_log_get_threshold.3 \
	docs/man/rpma_log_set_function.3 \
	docs/man/rpma_log_set_threshold.3 \
	docs/man/rpma_mr_advise.3 \
	docs/man/rpma_mr_dereg.3 \
	docs/man/rpma_mr_get_descriptor.3 \
	docs/man/rpma_mr_get_descriptor_size.3 \
	docs/man/rpma_mr_get_ptr.3 \
	docs/man/rpma_mr_get_size.3 \
	docs/man/rpma_mr_reg.3 \
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
	docs/man/rpma_peer_delete.3 \
	docs/man/rpma_peer_new.3 \
	docs/man/rpma_read.3 \
	docs/man/rpma_recv.3 \
	docs/man/rpma_send.3 \
	docs/man/rpma_send_with_imm.3 \
	docs/man/rpma_srq_cfg_delete.3 \
	docs/man/rpma_srq_cfg_get_rcq_size.3 \
	docs/man/rpma_srq_cfg_get_rq_size.3 \
	docs/man/rpma_srq_cfg_new.3 \
	docs/man/rpma_srq_cfg_set_rcq_size.3 \
	docs/man/rpma_srq_cfg_set_rq_size.3 \
	docs/man/rpma_srq_delete.3 \
	docs/man/rpma_srq_get_rcq.3 \
	docs/man/rpma_srq_new.3 \
	docs/man/rpma_srq_recv.3 \
	docs/man/rpma_utils_conn_event_2str.3 \
	docs/man/rpma_utils_get_ibv_context.3 \
	docs/man/rpma_utils_ibv_context_is_odp_capable.3 \
	docs/man/rpma_write.3 \
	docs/man/rpma_write_with_imm.3

EXTRA_DIST += docs/wire-format.md

# the benchmarks under tools/bench/ and what vs-postgres reports; the
# plot of a replctl bench --csv run it shows
EXTRA_DIST += docs/benchmarks.md docs/bench-latency.png

# every exported function has a page; every page renders without warnings
TESTS += tests/man/check-man-pages.sh
EXTRA_DIST += tests/man/check-man-pages.sh tests/man/man_lib.sh

# the replication engine: the control channel's messages
EXTRA_DIST += docs/replication.md
EXTRA_DIST += docs/sqlite.md

# librepl, the replication engine's library for databases: one page per
# exported function (repl_appendv.3, repl_replica_status.3 and the pages
# of the functions a page documents with its first are .so redirects to
# the page they share), and the overview librepl.3
dist_man_MANS += \
	docs/man/librepl.3 \
	docs/man/repl_append.3 \
	docs/man/repl_appendv.3 \
	docs/man/repl_close.3 \
	docs/man/repl_iterate.3 \
	docs/man/repl_iterate_records.3 \
	docs/man/repl_link_state_name.3 \
	docs/man/repl_lock_holder.3 \
	docs/man/repl_log_set_function.3 \
	docs/man/repl_log_set_threshold.3 \
	docs/man/repl_open.3 \
	docs/man/repl_rdma_available.3 \
	docs/man/repl_read.3 \
	docs/man/repl_reader_close.3 \
	docs/man/repl_reader_header.3 \
	docs/man/repl_reader_open.3 \
	docs/man/repl_reader_summary.3 \
	docs/man/repl_reader_walk.3 \
	docs/man/repl_record_info.3 \
	docs/man/repl_release.3 \
	docs/man/repl_restore_abort.3 \
	docs/man/repl_restore_add.3 \
	docs/man/repl_restore_finish.3 \
	docs/man/repl_restore_open.3 \
	docs/man/repl_lsn_keeping.3 \
	docs/man/repl_release_past_down.3 \
	docs/man/repl_membership.3 \
	docs/man/repl_replica_close.3 \
	docs/man/repl_replica_info.3 \
	docs/man/repl_replica_iterate.3 \
	docs/man/repl_replica_iterate_records.3 \
	docs/man/repl_replica_wait.3 \
	docs/man/repl_replica_hold.3 \
	docs/man/repl_replica_unhold.3 \
	docs/man/repl_replica_hold_slot.3 \
	docs/man/repl_replica_unhold_slot.3 \
	docs/man/repl_replica_want_base.3 \
	docs/man/repl_replica_open.3 \
	docs/man/repl_replica_run.3 \
	docs/man/repl_replica_status.3 \
	docs/man/repl_replica_stop.3 \
	docs/man/repl_status.3 \
	docs/man/repl_strerror.3 \
	docs/man/repl_tls_check.3 \
	docs/man/repl_verify.3 \
	docs/man/repl_wait_durable.3

# the programs: the daemon, its configuration file and the admin tool
dist_man_MANS += \
	docs/man/repld.8 \
	docs/man/repld.conf.5 \
	docs/man/replctl.8

# they render without a warning and leave no command or setting out
TESTS += tests/man/check-product-man.sh
EXTRA_DIST += tests/man/check-product-man.sh
