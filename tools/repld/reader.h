/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reader.h -- the admin socket's READ FROM [follow] (admin_proto.h): a
 * connection streams the primary's committed records, holding retention.
 */
#ifndef REPLD_READER_H
#define REPLD_READER_H

#include "admin_req.h"

struct admin;
struct conn;

/* serve READ on c's own thread; returns when the stream ends */
void reader_serve(struct conn *c, const struct admin_req *req);

/* a round of appends is durable: followers look again (when there are any) */
void reader_wake_all(struct admin *a);

#endif
