#!/usr/bin/env python3
"""Write the smali sources of a stub boot class path ("core") that the real Android 11 runtime
(Debian's android-libart 11.0.0+r48, libart.so.0) can start from without a boot image, through
ClassLinker::InitWithoutImage. Nothing of Android's libcore is used: every class is generated.

usage: gen-core.py ART_SRC OUT_DIR
  ART_SRC: the ART 11 source tree; only these are read:
    runtime/native/*.cc            the gMethods[] tables Runtime::RegisterRuntimeNativeMethods
                                   registers (runtime.cc:1964)
    runtime/intrinsics_list.h      the methods InitializeIntrinsics looks up
                                   (runtime_intrinsics.cc)
    runtime/well_known_classes.cc  what WellKnownClasses::Init/LateInit caches (:327-499)
Everything else the runtime demands is stated below with the ART 11 source that demands it
(file:line of android-platform-art 11.0.0+r48). Method bodies are trivial (return 0/null)
except the few the runtime runs while it starts (section 7).
"""
import os
import re
import sys

OBJECT, CLASS, STRING = "Ljava/lang/Object;", "Ljava/lang/Class;", "Ljava/lang/String;"
THROWABLE = "Ljava/lang/Throwable;"


class Klass:
    def __init__(self, desc, sup=OBJECT, access="public", ifaces=()):
        self.desc, self.sup, self.access, self.ifaces = desc, sup, access, list(ifaces)
        self.fields = {}    # (name, type) -> access
        self.methods = {}   # (name, proto) -> [access, body or None, annotations]
        self.declared = False


classes = {}


def klass(desc, sup=OBJECT, access="public", ifaces=()):
    """Declare a class (its superclass and access win over an earlier mere reference)."""
    k = classes.get(desc)
    if k is None:
        k = classes[desc] = Klass(desc, sup, access, ifaces)
    elif not k.declared:
        k.sup, k.access, k.ifaces = sup, access, list(ifaces)
    k.declared = True
    return k


def ref(desc):
    """A type that is only referred to: it must exist (JNI GetFieldID resolves field types)."""
    desc = desc.lstrip("[")
    if desc.startswith("L") and desc not in classes:
        classes[desc] = Klass(desc)


def field(desc, name, typ, access="public"):
    classes[desc].fields[(name, typ)] = access
    ref(typ)


def method(desc, name, proto, access="public", body=None, annos=()):
    m = classes[desc].methods.get((name, proto))
    if m is None:
        classes[desc].methods[(name, proto)] = m = [access, body, set(annos)]
    else:
        if body is not None:
            m[1] = body
        if "native" in access.split() and "native" not in m[0].split():
            m[0] = access
        m[2] |= set(annos)
    for t in split_proto(proto):
        ref(t)
    return m


def split_proto(proto):
    """'(I[Ljava/lang/String;)V' -> ['I', '[Ljava/lang/String;', 'V'] (return type last)."""
    args, ret = re.fullmatch(r"\((.*)\)(.+)", proto).groups()
    return re.findall(r"\[*(?:L[^;]+;|[ZBCSIJFDV])", args) + [ret]


def native_tables(art):
    """(class, name, proto, kind, is_static) of every runtime native method."""
    out = []
    d = os.path.join(art, "runtime/native")
    for fn in sorted(os.listdir(d)):
        src = open(os.path.join(d, fn)).read() if fn.endswith(".cc") else ""
        m = re.search(r'REGISTER_NATIVE_METHODS\("([^"]+)"\)', src)
        if not m:
            continue
        jcls = "L%s;" % m.group(1)
        table = re.search(r"gMethods\[\]\s*=\s*\{(.*?)\n\};", src, re.S).group(1)
        table = re.sub(r"//[^\n]*", "", table)
        for e in re.finditer(r"(\w*NATIVE_METHOD)\s*\(\s*(\w+)\s*,\s*(\w+)\s*,\s*((?:\"[^\"]*\"\s*)+)"
                             r"(?:,\s*(\w+))?\s*\)", table):
            kind, cname, name, protos, suffix = e.groups()
            proto = "".join(re.findall(r'"([^"]*)"', protos))
            # static iff the C function's second parameter is a jclass (native/*.cc)
            cfun = re.search(r"\b%s_%s\s*\(([^)]*)\)" % (cname, suffix or name), src)
            params = [p.split()[0] for p in cfun.group(1).split(",") if p.strip()] if cfun else []
            static = kind.startswith("CRITICAL") or (len(params) > 1 and params[1] == "jclass")
            out.append((jcls, name, proto, kind, static))
    return out


def intrinsic_list(art):
    """{(class, name, proto): invoke type} from intrinsics_list.h."""
    out = {}
    for line in open(os.path.join(art, "runtime/intrinsics_list.h")):
        m = re.match(r'\s*V\(\w+,\s*(\w+),[^"]*"([^"]+)",\s*"([^"]+)",\s*"([^"]+)"', line)
        if m:
            out[(m.group(2), m.group(3), m.group(4))] = m.group(1)
    return out


def object_class():
    # 1. java.lang.Object: mirror::Object's two fields (mirror/object.h), and exactly
    #    Object::kVTableLength = 11 virtual methods (mirror/object.h:80): the 11 below, with the
    #    natives notify, notifyAll and wait(JI) virtual (native/java_lang_Object.cc).
    o = klass(OBJECT, sup=None)
    field(OBJECT, "shadow$_klass_", CLASS, "private transient")
    field(OBJECT, "shadow$_monitor_", "I", "private transient")
    method(OBJECT, "<init>", "()V", "public constructor", "return-void")
    method(OBJECT, "getClass", "()Ljava/lang/Class;", "public final",
           "iget-object v0, p0, Ljava/lang/Object;->shadow$_klass_:Ljava/lang/Class;\n"
           "return-object v0")
    for name, proto, acc in (("hashCode", "()I", "public"), ("equals", "(Ljava/lang/Object;)Z", "public"),
                             ("clone", "()Ljava/lang/Object;", "protected"),
                             ("toString", "()Ljava/lang/String;", "public"),
                             ("finalize", "()V", "protected"), ("wait", "()V", "public final"),
                             ("wait", "(J)V", "public final")):
        method(OBJECT, name, proto, acc)
    for name, proto in (("notify", "()V"), ("notifyAll", "()V"), ("wait", "(JI)V")):
        method(OBJECT, name, proto, "public final native")



def union_classes():
    """Returns the number of new virtual methods each hand-sized class must have."""
    # 2. Classes whose instances C++ reads ("Java/C++ union" classes): the instance fields of
    #    mirror::<X>, names and kinds as class_linker_test.cc ValidateFieldOrderOfJavaCppUnion-
    #    Classes (:567-837) lists them. LinkFields (class_linker.cc:8363) orders references,
    #    then by size, then by name, which gives the C++ offsets; class_linker.cc:868-1025
    #    CHECK the instance sizes.
    union = {
        CLASS: (OBJECT, "public final", [
            ("classLoader", "Ljava/lang/ClassLoader;"), ("componentType", CLASS),
            ("dexCache", OBJECT), ("extData", "Ldalvik/system/ClassExt;"),
            ("ifTable", "[Ljava/lang/Object;"), ("name", STRING), ("superClass", CLASS),
            ("vtable", OBJECT), ("iFields", "J"), ("methods", "J"), ("sFields", "J"),
            ("accessFlags", "I"), ("classFlags", "I"), ("classSize", "I"),
            ("clinitThreadId", "I"), ("dexClassDefIndex", "I"), ("dexTypeIndex", "I"),
            ("numReferenceInstanceFields", "I"), ("numReferenceStaticFields", "I"),
            ("objectSize", "I"), ("objectSizeAllocFastPath", "I"), ("primitiveType", "I"),
            ("referenceInstanceOffsets", "I"), ("status", "I"), ("copiedMethodsOffset", "S"),
            ("virtualMethodsOffset", "S")]),
        "Ldalvik/system/ClassExt;": (OBJECT, "public final", [
            ("instanceJfieldIDs", OBJECT), ("jmethodIDs", OBJECT), ("obsoleteClass", CLASS),
            ("obsoleteDexCaches", "[Ljava/lang/Object;"), ("obsoleteMethods", OBJECT),
            ("originalDexFile", OBJECT), ("staticJfieldIDs", OBJECT), ("verifyError", OBJECT),
            ("preRedefineDexFilePtr", "J"), ("preRedefineClassDefIndex", "I")]),
        STRING: (OBJECT, "public final", [("count", "I"), ("hash", "I")]),
        THROWABLE: (OBJECT, "public", [
            ("backtrace", OBJECT), ("cause", THROWABLE), ("detailMessage", STRING),
            ("stackTrace", "[Ljava/lang/StackTraceElement;"),
            ("suppressedExceptions", "Ljava/util/List;")]),
        "Ljava/lang/StackTraceElement;": (OBJECT, "public final", [
            ("declaringClass", STRING), ("fileName", STRING), ("methodName", STRING),
            ("lineNumber", "I")]),
        "Ljava/lang/ClassLoader;": (OBJECT, "public abstract", [
            ("packages", "Ljava/util/Map;"), ("parent", "Ljava/lang/ClassLoader;"),
            ("proxyCache", "Ljava/util/Map;"), ("allocator", "J"), ("classTable", "J")]),
        "Ljava/lang/reflect/Proxy;": (OBJECT, "public", [
            ("h", "Ljava/lang/reflect/InvocationHandler;")]),
        "Ljava/lang/DexCache;": (OBJECT, "final", [
            ("classLoader", "Ljava/lang/ClassLoader;"), ("location", STRING), ("dexFile", "J"),
            ("preResolvedStrings", "J"), ("resolvedCallSites", "J"), ("resolvedFields", "J"),
            ("resolvedMethodTypes", "J"), ("resolvedMethods", "J"), ("resolvedTypes", "J"),
            ("strings", "J"), ("numPreResolvedStrings", "I"), ("numResolvedCallSites", "I"),
            ("numResolvedFields", "I"), ("numResolvedMethodTypes", "I"),
            ("numResolvedMethods", "I"), ("numResolvedTypes", "I"), ("numStrings", "I")]),
        # abstract: Reference::ClassSize has no embedded vtable (mirror/reference-inl.h:30);
        # FinishInit (class_linker.cc:1062) checks fields 0-3 by name
        "Ljava/lang/ref/Reference;": (OBJECT, "public abstract", [
            ("pendingNext", "Ljava/lang/ref/Reference;"),
            ("queue", "Ljava/lang/ref/ReferenceQueue;"),
            ("queueNext", "Ljava/lang/ref/Reference;"), ("referent", OBJECT)]),
        # FinishInit: FinalizerReference's field 2 is "zombie"
        "Ljava/lang/ref/FinalizerReference;": ("Ljava/lang/ref/Reference;", "public final", [
            ("next", "Ljava/lang/ref/FinalizerReference;"),
            ("prev", "Ljava/lang/ref/FinalizerReference;"), ("zombie", OBJECT)]),
        "Ljava/lang/reflect/AccessibleObject;": (OBJECT, "public", [("override", "Z")]),
        "Ljava/lang/reflect/Field;": ("Ljava/lang/reflect/AccessibleObject;", "public final", [
            ("declaringClass", CLASS), ("type", CLASS), ("accessFlags", "I"),
            ("artFieldIndex", "I"), ("offset", "I")]),
        "Ljava/lang/reflect/Executable;": ("Ljava/lang/reflect/AccessibleObject;",
                                           "public abstract", [
            ("declaringClass", CLASS), ("declaringClassOfOverriddenMethod", CLASS),
            ("parameters", "[Ljava/lang/reflect/Parameter;"), ("artMethod", "J"),
            ("accessFlags", "I"), ("dexMethodIndex", "I"), ("hasRealParameterData", "Z")]),
        "Ljava/lang/invoke/MethodType;": (OBJECT, "public final", [
            ("form", OBJECT), ("methodDescriptor", STRING), ("ptypes", "[Ljava/lang/Class;"),
            ("rtype", CLASS), ("wrapAlt", "Ljava/lang/invoke/MethodType;")]),
        "Ljava/lang/invoke/MethodHandle;": (OBJECT, "public abstract", [
            ("cachedSpreadInvoker", "Ljava/lang/invoke/MethodHandle;"),
            ("nominalType", "Ljava/lang/invoke/MethodType;"),
            ("type", "Ljava/lang/invoke/MethodType;"), ("artFieldOrMethod", "J"),
            ("handleKind", "I")]),
        "Ljava/lang/invoke/MethodHandleImpl;": ("Ljava/lang/invoke/MethodHandle;", "public",
                                                [("info", OBJECT)]),
        "Ljava/lang/invoke/MethodHandles$Lookup;": (OBJECT, "public final", [
            ("lookupClass", CLASS), ("allowedModes", "I")]),
        "Ldalvik/system/EmulatedStackFrame;": (OBJECT, "public", [
            ("callsiteType", "Ljava/lang/invoke/MethodType;"),
            ("references", "[Ljava/lang/Object;"), ("stackFrame", "[B"),
            ("type", "Ljava/lang/invoke/MethodType;")]),
        "Ljava/lang/invoke/CallSite;": (OBJECT, "public abstract", [
            ("target", "Ljava/lang/invoke/MethodHandle;")]),
        "Ljava/lang/invoke/VarHandle;": (OBJECT, "public abstract", [
            ("coordinateType0", CLASS), ("coordinateType1", CLASS), ("varType", CLASS),
            ("accessModesBitMask", "I")]),
        "Ljava/lang/invoke/FieldVarHandle;": ("Ljava/lang/invoke/VarHandle;", "final",
                                              [("artField", "J")]),
        "Ljava/lang/invoke/ArrayElementVarHandle;": ("Ljava/lang/invoke/VarHandle;", "final", []),
        "Ljava/lang/invoke/ByteArrayViewVarHandle;": ("Ljava/lang/invoke/VarHandle;", "final",
                                                      [("nativeByteOrder", "Z")]),
        "Ljava/lang/invoke/ByteBufferViewVarHandle;": ("Ljava/lang/invoke/VarHandle;", "final",
                                                       [("nativeByteOrder", "Z")]),
    }
    for desc, (sup, acc, fields) in union.items():
        klass(desc, sup, acc)
    for desc, (sup, acc, fields) in union.items():
        for name, typ in fields:
            field(desc, name, typ, "private transient" if desc == CLASS else "private")

    # Static fields that the fixed class sizes of InitWithoutImage count:
    #   Class::ClassClassSize  = ComputeClassSize(true, 11 + 67, 0, 0, 4, 1, 0)  class.h:567
    #   String::ClassSize      = ComputeClassSize(true, 11 + 54, 0, 0, 0, 1, 2)  string-inl.h:42
    #   Reference::ClassSize   = ComputeClassSize(false, 0, 2, 0, 0, 0, 0)     reference-inl.h:30
    # (booleans, bytes, chars, shorts, ints, longs, references). Too few or too many virtual
    # methods and the class is retired: "InitWithoutImage: Class mismatch" (class_linker.cc:660).
    for n in ("ANNOTATION", "ENUM", "SYNTHETIC", "FINALIZABLE"):
        field(CLASS, n, "I", "private static final")
    field(CLASS, "serialVersionUID", "J", "private static final")
    field(STRING, "serialVersionUID", "J", "private static final")
    field(STRING, "CASE_INSENSITIVE_ORDER", "Ljava/util/Comparator;", "public static final")
    field(STRING, "serialPersistentFields", "[Ljava/lang/Object;", "private static final")
    field("Ljava/lang/ref/Reference;", "disableIntrinsic", "Z", "public static")
    field("Ljava/lang/ref/Reference;", "slowPathEnabled", "Z", "public static")
    new_virtuals = {CLASS: 67, STRING: 54, "Ljava/lang/DexCache;": 0, "Ldalvik/system/ClassExt;": 0}

    return new_virtuals


def looked_up_classes():
    """Returns the throwables (their constructors come in section 7)."""
    # 3. Classes looked up by name in InitWithoutImage / FinishInit (class_linker.cc:897-1038)
    for desc, sup, acc in (
            ("Ljava/lang/Cloneable;", OBJECT, "public abstract interface"),
            ("Ljava/io/Serializable;", OBJECT, "public abstract interface"),
            ("Ljava/lang/reflect/Method;", "Ljava/lang/reflect/Executable;", "public final"),
            ("Ljava/lang/reflect/Constructor;", "Ljava/lang/reflect/Executable;", "public final"),
            ("Ljava/lang/ref/PhantomReference;", "Ljava/lang/ref/Reference;", "public"),
            ("Ljava/lang/ref/SoftReference;", "Ljava/lang/ref/Reference;", "public"),
            ("Ljava/lang/ref/WeakReference;", "Ljava/lang/ref/Reference;", "public"),
            ("Ljava/lang/ref/ReferenceQueue;", OBJECT, "public"),
            ("Ljava/lang/BootClassLoader;", "Ljava/lang/ClassLoader;", "public"),
            ("Ljava/lang/StringFactory;", OBJECT, "public final")):
        klass(desc, sup, acc)
    # The throwables the runtime may build (ThrowNewException needs their constructors).
    lang, io = "Ljava/lang/%s;", "Ljava/io/%s;"
    hierarchy = {
        THROWABLE: ["Exception", "Error"],
        lang % "Exception": ["RuntimeException", "ReflectiveOperationException",
                             "CloneNotSupportedException", "InterruptedException", io % "IOException"],
        lang % "ReflectiveOperationException": [
            "ClassNotFoundException", "IllegalAccessException", "InstantiationException",
            "NoSuchFieldException", "NoSuchMethodException",
            "Ljava/lang/reflect/InvocationTargetException;"],
        io % "IOException": [io % "FileNotFoundException"],
        lang % "RuntimeException": [
            "ArithmeticException", "ArrayStoreException", "ClassCastException",
            "IllegalArgumentException", "IllegalMonitorStateException", "IllegalStateException",
            "IndexOutOfBoundsException", "NegativeArraySizeException", "NullPointerException",
            "SecurityException", "UnsupportedOperationException",
            "Ljava/lang/reflect/UndeclaredThrowableException;",
            "Ljava/lang/invoke/WrongMethodTypeException;",
            "Ljava/lang/reflect/MalformedParametersException;"],
        lang % "IndexOutOfBoundsException": ["ArrayIndexOutOfBoundsException",
                                             "StringIndexOutOfBoundsException"],
        lang % "Error": ["LinkageError", "VirtualMachineError"],
        lang % "VirtualMachineError": ["OutOfMemoryError", "StackOverflowError", "InternalError"],
        lang % "LinkageError": [
            "NoClassDefFoundError", "ClassCircularityError", "ClassFormatError",
            "ExceptionInInitializerError", "UnsatisfiedLinkError", "VerifyError",
            "BootstrapMethodError", "IncompatibleClassChangeError"],
        lang % "IncompatibleClassChangeError": [
            "AbstractMethodError", "IllegalAccessError", "InstantiationError", "NoSuchFieldError",
            "NoSuchMethodError"],
    }
    throwables = [THROWABLE]
    for sup, subs in hierarchy.items():
        for s in subs:
            d = s if s.startswith("L") and s.endswith(";") else lang % s
            klass(d, sup)
            throwables.append(d)

    return throwables


def runtime_natives(art, intrinsics):
    # 4. Runtime natives: RegisterNatives fails hard (native/native_util.h CHECK_EQ) unless
    #    every method of every table exists and is native. An instance native is private (a
    #    direct method) unless it is a virtual intrinsic: private keeps the vtable counts of
    #    section 2 intact.
    for jcls, name, proto, kind, static in native_tables(art):
        klass(jcls) if jcls not in classes else None
        annos = []
        if "FAST" in kind:
            annos = ["Ldalvik/annotation/optimization/FastNative;"]
        elif "CRITICAL" in kind:
            annos = ["Ldalvik/annotation/optimization/CriticalNative;"]
        if jcls == OBJECT:
            acc = "public final native" if (name, proto) in (
                ("notify", "()V"), ("notifyAll", "()V"), ("wait", "(JI)V")) else \
                ("public static native" if static else "private native")
        elif static:
            acc = "public static native"
        elif intrinsics.get((jcls, name, proto)) == "kVirtual":
            acc = "public final native"
        else:
            acc = "private native"
        method(jcls, name, proto, acc, annos=annos)



def intrinsic_methods(intrinsics):
    # 5. Intrinsics: InitializeIntrinsics (runtime_intrinsics.cc) LOG(FATAL)s unless each
    #    method exists with its invoke type (kPolymorphic: a native varargs method).
    kinds = {"kStatic": "public static", "kDirect": "private", "kInterface": "public abstract",
             "kPolymorphic": "public final varargs native", "kVirtual": "public"}
    for (jcls, name, proto), kind in intrinsics.items():
        ref(jcls)
        if (name, proto) not in classes[jcls].methods:
            acc = kinds[kind]
            if kind == "kVirtual" and jcls == STRING:
                acc = "public final"
            method(jcls, name, proto, acc)



def well_known(art):
    lang = "Ljava/lang/%s;"
    # 6. WellKnownClasses::Init (well_known_classes.cc:327-499): classes, methods, fields, the
    #    String.<init> <-> StringFactory pairs (STRING_INIT_LIST, checked from FinishInit) and
    #    the boxing valueOf methods (LateInit).
    wkc = open(os.path.join(art, "runtime/well_known_classes.cc")).read()
    var = {}
    for m in re.finditer(r'(\w+)\s*=\s*CacheClass\(env,\s*"([^"]+)"\)', wkc):
        var[m.group(1)] = m.group(2) if m.group(2).startswith("[") else "L%s;" % m.group(2)
        ref(var[m.group(1)])
    for m in re.finditer(r'ScopedLocalRef<jclass>\s+(\w+)\(env,\s*env->FindClass\("([^"]+)"\)\)', wkc):
        var[m.group(1) + ".get()"] = "L%s;" % m.group(2)
        ref("L%s;" % m.group(2))
    init = wkc[wkc.index("void WellKnownClasses::Init("):
               wkc.index("void WellKnownClasses::HandleJniIdTypeChange")]
    for m in re.finditer(r'CacheMethod\(env,\s*([\w.()]+|"[^"]+"),\s*(true|false),\s*"([^"]+)",'
                         r'\s*((?:"[^"]*"\s*)+)\)', init, re.S):
        c, static, name, protos = m.groups()
        desc = "L%s;" % c.strip('"') if c.startswith('"') else var[c]
        ref(desc)
        acc = "public constructor" if name == "<init>" else (
            "public static" if static == "true" else "public")
        method(desc, name, "".join(re.findall(r'"([^"]*)"', protos)), acc)
    for m in re.finditer(r'CacheField\(env,\s*([\w.()]+),\s*(true|false),\s*"([^"]+)",\s*"([^"]+)"\)',
                         init):
        c, static, name, typ = m.groups()
        desc = var[c]
        ref(desc)
        # Buffer's address/limit: GetFieldID finds them in the superclass
        if (desc, name) in (("Ljava/nio/ByteBuffer;", "address"), ("Ljava/nio/ByteBuffer;", "limit"),
                            ("Ljava/nio/DirectByteBuffer;", "address")):
            continue
        field(desc, name, typ, "public static" if static == "true" else "public")
    for box, prim in (("Boolean", "Z"), ("Byte", "B"), ("Character", "C"), ("Double", "D"),
                      ("Float", "F"), ("Integer", "I"), ("Long", "J"), ("Short", "S")):
        d = lang % box
        klass(d, access="public final")
        field(d, "value", prim, "private final")
        method(d, "valueOf", "(%s)%s" % (prim, d), "public static")
    for desc, sup, acc in (("Ljava/nio/Buffer;", OBJECT, "public abstract"),
                           ("Ljava/nio/ByteBuffer;", "Ljava/nio/Buffer;", "public abstract"),
                           ("Ljava/nio/DirectByteBuffer;", "Ljava/nio/ByteBuffer;", "public"),
                           ("Ldalvik/system/BaseDexClassLoader;", "Ljava/lang/ClassLoader;", "public"),
                           ("Ldalvik/system/DexClassLoader;", "Ldalvik/system/BaseDexClassLoader;", "public"),
                           ("Ldalvik/system/PathClassLoader;", "Ldalvik/system/BaseDexClassLoader;", "public"),
                           ("Ldalvik/system/DelegateLastClassLoader;", "Ldalvik/system/PathClassLoader;", "public"),
                           ("Ldalvik/system/InMemoryDexClassLoader;", "Ldalvik/system/BaseDexClassLoader;", "public")):
        klass(desc, sup, acc)
    for m in re.finditer(r'V\(java_lang_String_init\w*, "([^"]+)", \w+, "(\w+)", "([^"]+)"', wkc):
        method(STRING, "<init>", m.group(1), "public constructor",
               "invoke-direct {p0}, Ljava/lang/Object;-><init>()V\nreturn-void")
        method("Ljava/lang/StringFactory;", m.group(2), m.group(3), "public static")



def startup_code(throwables):
    # 7. Java code Runtime::Start runs (runtime.cc:845-940), with real bodies:
    #    InitThreadGroups CHECKs ThreadGroup.systemThreadGroup/mainThreadGroup (runtime.cc:1934);
    #    CreateSystemClassLoader (runtime.cc:769) calls ClassLoader.getSystemClassLoader() and
    #    stores it in Thread.contextClassLoader; Thread::CreatePeer calls
    #    Thread.<init>(ThreadGroup,String,int,boolean) (an empty body: InitPeer sets the fields).
    tg = "Ljava/lang/ThreadGroup;"
    klass(tg)
    method(tg, "<clinit>", "()V", "static constructor",
           "new-instance v0, Ljava/lang/ThreadGroup;\n"
           "invoke-direct {v0}, Ljava/lang/ThreadGroup;-><init>()V\n"
           "sput-object v0, Ljava/lang/ThreadGroup;->systemThreadGroup:Ljava/lang/ThreadGroup;\n"
           "new-instance v1, Ljava/lang/ThreadGroup;\n"
           "invoke-direct {v1}, Ljava/lang/ThreadGroup;-><init>()V\n"
           "iput-object v0, v1, Ljava/lang/ThreadGroup;->parent:Ljava/lang/ThreadGroup;\n"
           "sput-object v1, Ljava/lang/ThreadGroup;->mainThreadGroup:Ljava/lang/ThreadGroup;\n"
           "return-void")
    klass("Ljava/lang/Thread;", ifaces=["Ljava/lang/Runnable;"])
    field("Ljava/lang/Thread;", "contextClassLoader", "Ljava/lang/ClassLoader;", "private")
    cl = "Ljava/lang/ClassLoader;"
    field(cl, "systemLoader", cl, "private static")
    method(cl, "getSystemClassLoader", "()Ljava/lang/ClassLoader;", "public static",
           "sget-object v0, Ljava/lang/ClassLoader;->systemLoader:Ljava/lang/ClassLoader;\n"
           "if-nez v0, :have\n"
           "new-instance v0, Ljava/lang/BootClassLoader;\n"
           "invoke-direct {v0}, Ljava/lang/BootClassLoader;-><init>()V\n"
           "sput-object v0, Ljava/lang/ClassLoader;->systemLoader:Ljava/lang/ClassLoader;\n"
           ":have\nreturn-object v0")
    proxy = "Ljava/lang/reflect/Proxy;"
    method(proxy, "<init>", "(Ljava/lang/reflect/InvocationHandler;)V", "protected constructor",
           "invoke-direct {p0}, Ljava/lang/Object;-><init>()V\n"
           "iput-object p1, p0, Ljava/lang/reflect/Proxy;->h:Ljava/lang/reflect/InvocationHandler;\n"
           "return-void")
    method(proxy, "invoke", "(Ljava/lang/reflect/Proxy;Ljava/lang/reflect/Method;[Ljava/lang/Object;)"
           "Ljava/lang/Object;", "private static")
    method("Ljava/lang/Runtime;", "nativeLoad",
           "(Ljava/lang/String;Ljava/lang/ClassLoader;Ljava/lang/Class;)Ljava/lang/String;",
           "private static")
    setmsg = "iput-object p1, p0, Ljava/lang/Throwable;->detailMessage:Ljava/lang/String;\n"
    for d in throwables:
        sup = classes[d].sup
        own = d == THROWABLE
        base = "invoke-direct {p0}, Ljava/lang/Object;-><init>()V\n"
        method(d, "<init>", "()V", "public constructor",
               "invoke-direct {p0}, %s-><init>()V\nreturn-void" % sup)
        method(d, "<init>", "(Ljava/lang/String;)V", "public constructor",
               base + setmsg + "return-void" if own else
               "invoke-direct {p0, p1}, %s-><init>(Ljava/lang/String;)V\nreturn-void" % sup)
        method(d, "<init>", "(Ljava/lang/String;Ljava/lang/Throwable;)V", "public constructor",
               base + setmsg + "iput-object p2, p0, Ljava/lang/Throwable;->cause:Ljava/lang/Throwable;\n"
               "return-void" if own else
               "invoke-direct {p0, p1, p2}, %s-><init>(Ljava/lang/String;Ljava/lang/Throwable;)V\n"
               "return-void" % sup)
        method(d, "<init>", "(Ljava/lang/Throwable;)V", "public constructor",
               base + "iput-object p1, p0, Ljava/lang/Throwable;->cause:Ljava/lang/Throwable;\n"
               "return-void" if own else
               "invoke-direct {p0, p1}, %s-><init>(Ljava/lang/Throwable;)V\nreturn-void" % sup)


def build(art):
    object_class()
    new_virtuals = union_classes()
    throwables = looked_up_classes()
    intrinsics = intrinsic_list(art)
    runtime_natives(art, intrinsics)
    intrinsic_methods(intrinsics)
    well_known(art)
    startup_code(throwables)
    return new_virtuals


INTERFACES = {"Ljava/lang/Cloneable;", "Ljava/io/Serializable;", "Ljava/lang/Runnable;",
              "Ljava/util/List;", "Ljava/util/Map;", "Ljava/util/Collection;",
              "Ljava/util/Comparator;", "Ljava/util/function/Consumer;",
              "Ljava/lang/reflect/InvocationHandler;", "Ljava/lang/CharSequence;",
              "Ljava/lang/Comparable;", "Ljava/lang/annotation/Annotation;",
              "Ljava/lang/reflect/Type;", "Ljava/lang/reflect/AnnotatedElement;",
              "Ljava/lang/reflect/GenericDeclaration;", "Ljava/lang/reflect/Member;",
              "Ljava/lang/invoke/MethodHandleInfo;", "Ljava/lang/Iterable;",
              "Ljava/lang/AutoCloseable;", "Ljava/lang/Thread$UncaughtExceptionHandler;"}
ANNOTATIONS = {"Ldalvik/annotation/optimization/FastNative;",
               "Ldalvik/annotation/optimization/CriticalNative;"}


def is_virtual(name, m):
    acc = m[0].split()
    return not name.startswith("<") and "static" not in acc and "private" not in acc


def finish(new_virtuals):
    """Interfaces, default constructors, and the padding that makes the vtables of section 2."""
    for desc in list(classes):
        k = classes[desc]
        for t in [k.sup] + k.ifaces if k.sup else k.ifaces:
            ref(t)
    for desc, k in classes.items():
        if desc in ANNOTATIONS:
            k.access, k.ifaces = "public abstract interface annotation", [
                "Ljava/lang/annotation/Annotation;"]
        elif desc in INTERFACES:
            k.access = "public abstract interface"
        if "interface" in k.access:
            k.sup = OBJECT
            for m in k.methods.values():
                if "static" not in m[0].split():
                    m[0], m[1] = "public abstract", None
        elif desc != OBJECT and ("<init>", "()V") not in k.methods:
            method(desc, "<init>", "()V", "public constructor",
                   "invoke-direct {p0}, %s-><init>()V\nreturn-void" % k.sup)
    ref("Ljava/lang/annotation/Annotation;")
    classes["Ljava/lang/annotation/Annotation;"].access = "public abstract interface"
    base = {key for key, m in classes[OBJECT].methods.items() if is_virtual(key[0], m)}
    assert len(base) == 11, sorted(base)
    for desc, want in new_virtuals.items():
        have = [key for key, m in classes[desc].methods.items()
                if is_virtual(key[0], m) and key not in base]
        assert len(have) <= want, (desc, len(have))
        for i in range(want - len(have)):
            method(desc, "pad%02d" % i, "()V", "public final", "return-void")


def default_body(ret):
    if ret == "V":
        return "return-void"
    if ret in "JD":
        return "const-wide/16 v0, 0\nreturn-wide v0"
    if ret[0] in "L[":
        return "const/4 v0, 0\nreturn-object v0"
    return "const/4 v0, 0\nreturn v0"


def emit(out):
    for desc, k in classes.items():
        lines = [".class %s %s" % (k.access, desc)]
        if k.sup:
            lines.append(".super " + k.sup)
        lines += [".implements " + i for i in k.ifaces] + [""]
        lines += [".field %s %s:%s" % (acc, n, t) for (n, t), acc in sorted(k.fields.items())]
        for (name, proto), (acc, body, annos) in k.methods.items():
            lines.append("\n.method %s %s%s" % (acc, name, proto))
            if {"native", "abstract"} & set(acc.split()):
                for a in sorted(annos):
                    lines += ["    .annotation build " + a, "    .end annotation"]
            else:
                lines.append("    .locals 4")
                if body is None:
                    body = ("invoke-direct {p0}, %s-><init>()V\nreturn-void" % k.sup
                            if name == "<init>" else default_body(split_proto(proto)[-1]))
                lines += ["    " + b for b in body.split("\n")]
            lines.append(".end method")
        path = os.path.join(out, desc[1:-1] + ".smali")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    finish(build(sys.argv[1]))
    emit(sys.argv[2])
    print("gen-core: %d classes" % len(classes), file=sys.stderr)


main()
