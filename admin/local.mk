# admin/ -- the admin socket's protocol (admin_proto.h) and its request
# parser (admin_req): spoken by repld, by replctl and by replvfs's own admin
# socket (sqlite/rv_admin_sock.c).  Below sqlite/ and tools/; it uses
# nothing of the project.  The manual pages' check reads admin_proto.h
# (tests/man/check-product-man.sh).

noinst_LTLIBRARIES += admin/libadmin_proto.la
admin_libadmin_proto_la_SOURCES = admin/admin_proto.h \
	admin/admin_req.c admin/admin_req.h
admin_libadmin_proto_la_CPPFLAGS = -I$(top_srcdir)/admin
