/* realart-launcher: starts Debian's real Android 11 runtime (android-libart 11.0.0+r48,
 * libart.so.0) in this process with JNI_CreateJavaVM and calls the static method
 * CLASS.main(int) found on the boot class path, for perch's e2e-realart suite.
 *
 *   realart-launcher BOOTCLASSPATH CLASS ARG [ART options...]
 *
 * BOOTCLASSPATH lists the dex files or jars (':'-separated): the generated stub core first, then
 * the test program (the stub ClassLoader.getSystemClassLoader() returns the boot class loader,
 * so JNI FindClass looks there). The environment (ANDROID_ROOT, ANDROID_DATA, ...) and the
 * three empty JNI libraries Runtime::InitNativeMethods loads (runtime.cc:1877) are set up by
 * the caller (tests/e2e/check_realart.c). Options needed in every run:
 *   -Ximage:<a file that does not exist>  no boot image: ClassLinker::InitWithoutImage
 *   -Xnoimage-dex2oat                      do not exec dex2oat to make one (runtime.cc:1620)
 *   -Xusejit:false                         Debian ships no libart-compiler.so
 *
 * The program talks back through perch.realart.Native:
 *   ready()  a native registered here: prints "ready PID" (the harness's handshake), returns;
 *   block()  the same, then sleeps forever;
 *   park()   sleeps forever (no ready line);
 *   spawn(name, mode)  starts a thread attached as @name that calls States.thread(mode);
 *   lock     an object whose monitor a thread of the launcher ("holder", attached to the VM)
 *            holds forever: Java code that enters it sleeps with its stack still, for perch
 *            dump and gdb to compare.
 * libart.so.0 has no DT_NEEDED entries for the Android libraries it uses; the Makefile links
 * them here (mk/realart.mk), with Android's jni.h (android-libnativehelper-dev). */
#include <dlfcn.h>
#include <errno.h>
#include <jni.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_OPTIONS 64

static void ready(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

static void block(JNIEnv *env, jclass cls)
{
	ready(env, cls);
	for (;;)
		pause();
}

static void park(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	for (;;)
		pause();
}

static JavaVM *the_vm;

struct spawn_arg {
	char name[64];
	int mode;
};

/* A thread attached to the runtime under its name, running States.thread(mode). */
static void *spawned(void *arg)
{
	struct spawn_arg *sa = arg;
	JavaVMAttachArgs aa = {JNI_VERSION_1_6, sa->name, NULL};
	JNIEnv *env;
	jclass cls;
	jmethodID mid;

	if ((*the_vm)->AttachCurrentThread(the_vm, &env, &aa) != JNI_OK)
		return NULL;
	cls = (*env)->FindClass(env, "perch/realart/States");
	mid = cls ? (*env)->GetStaticMethodID(env, cls, "thread", "(I)V") : NULL;
	if (mid)
		(*env)->CallStaticVoidMethod(env, cls, mid, (jint)sa->mode);
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionDescribe(env);
	for (;;)
		pause();
	return NULL;
}

static void spawn(JNIEnv *env, jclass cls, jstring name, jint mode)
{
	struct spawn_arg *sa = calloc(1, sizeof(*sa));
	const char *s = (*env)->GetStringUTFChars(env, name, NULL);
	pthread_t tid;

	(void)cls;
	if (!sa || !s)
		abort();
	snprintf(sa->name, sizeof(sa->name), "%s", s);
	(*env)->ReleaseStringUTFChars(env, name, s);
	sa->mode = (int)mode;
	if (pthread_create(&tid, NULL, spawned, sa))
		abort();
}

/* ART's runtime thread pool gives its workers 64 KiB stacks of its own (runtime.cc:1048
 * kStackSize, thread_pool.cc:65): fine for bionic, but glibc's PTHREAD_STACK_MIN is 128 KiB on
 * aarch64 and pthread_attr_setstack() refuses, which aborts Debian's arm64 libart.so.0 at start
 * ("pthread_attr_setstack failed for new thread pool worker thread"). This definition interposes
 * libart's call (the executable's symbol comes first): too small a stack becomes a stack of
 * the minimum size that glibc allocates. On x86_64 (minimum 16 KiB) nothing changes. */
int pthread_attr_setstack(pthread_attr_t *attr, void *addr, size_t size)
{
	static int (*real)(pthread_attr_t *, void *, size_t);

	if (size < (size_t)PTHREAD_STACK_MIN)
		return pthread_attr_setstacksize(attr, (size_t)PTHREAD_STACK_MIN);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_attr_setstack");
	return real ? real(attr, addr, size) : ENOSYS;
}

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
static int held = -1; /* -1 not yet, 0 failed, 1 the holder has the monitor */

static void set_held(int v)
{
	pthread_mutex_lock(&held_mu);
	held = v;
	pthread_cond_signal(&held_cv);
	pthread_mutex_unlock(&held_mu);
}

/* Create Native.lock and hold its monitor forever. */
static void *holder(void *arg)
{
	JavaVMAttachArgs aa = {JNI_VERSION_1_6, "holder", NULL};
	JavaVM *vm = arg;
	JNIEnv *env;
	jclass native, object;
	jfieldID fid;
	jobject lock;

	if ((*vm)->AttachCurrentThread(vm, &env, &aa) != JNI_OK) {
		set_held(0);
		return NULL;
	}
	native = (*env)->FindClass(env, "perch/realart/Native");
	object = (*env)->FindClass(env, "java/lang/Object");
	fid = native ? (*env)->GetStaticFieldID(env, native, "lock", "Ljava/lang/Object;") : NULL;
	lock = object ? (*env)->AllocObject(env, object) : NULL;
	if (!fid || !lock || (*env)->MonitorEnter(env, lock) != JNI_OK) {
		set_held(0);
		return NULL;
	}
	(*env)->SetStaticObjectField(env, native, fid, lock);
	set_held(1);
	for (;;)
		pause();
	return NULL;
}

static int fail(JNIEnv *env, const char *what)
{
	fprintf(stderr, "realart-launcher: %s\n", what);
	if (env && (*env)->ExceptionCheck(env))
		(*env)->ExceptionDescribe(env);
	return 1;
}

int main(int argc, char **argv)
{
	static const JNINativeMethod natives[] = {
	    {"ready", "()V", (void *)ready},
	    {"block", "()V", (void *)block},
	    {"park", "()V", (void *)park},
	    {"spawn", "(Ljava/lang/String;I)V", (void *)spawn},
	};
	JavaVMOption opts[MAX_OPTIONS];
	JavaVMInitArgs args;
	JavaVM *vm;
	JNIEnv *env = NULL;
	jclass cls, native;
	jmethodID main_id;
	pthread_t tid;
	char *bcp, *locations;
	int n = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s BOOTCLASSPATH CLASS ARG [ART options...]\n", argv[0]);
		return 2;
	}
	/* perch and gdb attach without being our parent (Yama ptrace_scope 1) */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (asprintf(&bcp, "-Xbootclasspath:%s", argv[1]) < 0 ||
	    asprintf(&locations, "-Xbootclasspath-locations:%s", argv[1]) < 0)
		return 1;
	memset(opts, 0, sizeof(opts));
	opts[n++].optionString = bcp;
	opts[n++].optionString = locations;
	for (int i = 4; i < argc && n < MAX_OPTIONS; i++)
		opts[n++].optionString = argv[i];
	args.version = JNI_VERSION_1_6;
	args.nOptions = n;
	args.options = opts;
	args.ignoreUnrecognized = JNI_FALSE;
	if (JNI_CreateJavaVM(&vm, &env, &args) != JNI_OK)
		return fail(NULL, "JNI_CreateJavaVM failed");
	native = (*env)->FindClass(env, "perch/realart/Native");
	if (!native || (*env)->RegisterNatives(env, native, natives, 4) != JNI_OK)
		return fail(env, "cannot register the natives of perch.realart.Native");
	the_vm = vm;
	if (pthread_create(&tid, NULL, holder, vm))
		return fail(env, "cannot start the holder thread");
	pthread_mutex_lock(&held_mu);
	while (held < 0)
		pthread_cond_wait(&held_cv, &held_mu);
	pthread_mutex_unlock(&held_mu);
	if (!held)
		return fail(env, "the holder thread cannot hold Native.lock");
	cls = (*env)->FindClass(env, argv[2]);
	if (!cls)
		return fail(env, "no such class");
	main_id = (*env)->GetStaticMethodID(env, cls, "main", "(I)V");
	if (!main_id)
		return fail(env, "no static main(int)");
	(*env)->CallStaticVoidMethod(env, cls, main_id, (jint)atoi(argv[3]));
	if ((*env)->ExceptionCheck(env))
		return fail(env, "main threw");
	return 0;
}
