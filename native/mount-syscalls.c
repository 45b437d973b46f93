// mount(2) and umount2(2) for the driver, as a tiny N-API addon. Running the mount
// program costs a fork+exec per volume (milliseconds, and it stalls Node's event loop
// while forking); the syscalls take microseconds. driver/volume/syscall-mounter.ts loads
// this and falls back to the mount program when the addon is not built.
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <node_api.h>

#define MAX_ARG 4096

static int get_string(napi_env env, napi_value value, char *buf, size_t size) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, buf, size, &len) != napi_ok) return 0;
  return len < size - 1;
}

// An Error with .code (e.g. "EBUSY") and .syscall, like Node's own fs errors.
static napi_value errno_error(napi_env env, const char *syscall, int err) {
  napi_value message, code, error, name;
  const char *errname = strerrorname_np(err);
  napi_create_string_utf8(env, errname ? errname : "EUNKNOWN", NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, strerror(err), NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &name);
  napi_set_named_property(env, error, "syscall", name);
  return error;
}

static napi_value throw_errno(napi_env env, const char *syscall, int err) {
  napi_throw(env, errno_error(env, syscall, err));
  return NULL;
}

// mount(source, target, fstype, flags, data)
static napi_value js_mount(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  char source[MAX_ARG], target[MAX_ARG], fstype[256], data[MAX_ARG];
  uint32_t flags = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 5 || !get_string(env, argv[0], source, sizeof source) || !get_string(env, argv[1], target, sizeof target)
      || !get_string(env, argv[2], fstype, sizeof fstype) || napi_get_value_uint32(env, argv[3], &flags) != napi_ok
      || !get_string(env, argv[4], data, sizeof data)) {
    napi_throw_type_error(env, NULL, "mount(source, target, fstype, flags, data) takes 4 strings and a number");
    return NULL;
  }
  if (mount(source, target, fstype, flags, data) != 0) return throw_errno(env, "mount", errno);
  return NULL;
}

// umountAsync(target, flags): umount2 on libuv's thread pool, returning a Promise. The
// kernel may wait for an RCU grace period while unmounting (a millisecond or more), which
// would otherwise stall the event loop on every NodeUnpublishVolume.
typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  char target[MAX_ARG];
  int flags;
  int err;
} umount_job;

static void umount_execute(napi_env env, void *data) {
  (void)env;
  umount_job *job = data;
  job->err = umount2(job->target, job->flags) != 0 ? errno : 0;
}

static void umount_complete(napi_env env, napi_status status, void *data) {
  umount_job *job = data;
  if (status == napi_ok && job->err == 0) {
    napi_value undefined;
    napi_get_undefined(env, &undefined);
    napi_resolve_deferred(env, job->deferred, undefined);
  } else {
    napi_reject_deferred(env, job->deferred, errno_error(env, "umount2", status == napi_ok ? job->err : ECANCELED));
  }
  napi_delete_async_work(env, job->work);
  free(job);
}

static napi_value js_umount_async(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], promise, name;
  uint32_t flags = 0;
  umount_job *job = calloc(1, sizeof *job);
  if (job == NULL) return throw_errno(env, "calloc", ENOMEM);
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 2 || !get_string(env, argv[0], job->target, sizeof job->target) || napi_get_value_uint32(env, argv[1], &flags) != napi_ok) {
    free(job);
    napi_throw_type_error(env, NULL, "umountAsync(target, flags) takes a string and a number");
    return NULL;
  }
  job->flags = (int)flags;
  napi_create_promise(env, &job->deferred, &promise);
  napi_create_string_utf8(env, "umount2", NAPI_AUTO_LENGTH, &name);
  napi_status created = napi_create_async_work(env, NULL, name, umount_execute, umount_complete, job, &job->work);
  if (created == napi_ok && napi_queue_async_work(env, job->work) == napi_ok) return promise;
  if (created == napi_ok) napi_delete_async_work(env, job->work);
  napi_reject_deferred(env, job->deferred, errno_error(env, "umount2", EAGAIN));
  free(job);
  return promise;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "mount", NAPI_AUTO_LENGTH, js_mount, NULL, &fn);
  napi_set_named_property(env, exports, "mount", fn);
  napi_create_function(env, "umountAsync", NAPI_AUTO_LENGTH, js_umount_async, NULL, &fn);
  napi_set_named_property(env, exports, "umountAsync", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
