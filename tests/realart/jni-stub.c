/* An empty JNI library. Runtime::InitNativeMethods (ART 11 runtime.cc:1877) LOG(FATAL)s unless
 * it can load libicu_jni.so, libjavacore.so and libopenjdk.so (libnativeloader dlopen()s them
 * by name on Linux); the stub core needs none of their natives, so each is built from this. */
int JNI_OnLoad(void *vm, void *reserved);

int JNI_OnLoad(void *vm, void *reserved)
{
	(void)vm;
	(void)reserved;
	return 0x00010006; /* JNI_VERSION_1_6 */
}
