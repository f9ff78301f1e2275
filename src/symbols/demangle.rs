//! Symbol names demangled as Valgrind shows them. Valgrind demangles C++
//! and Rust names with GNU libiberty's demangler (`DMGL_ANSI |
//! DMGL_PARAMS`); where the build found libiberty (build.rs), linegrind
//! calls the same, so that its names are Callgrind's. Without it the
//! demanglers of the `addr2line` crate stand in: their Rust names drop the
//! hash and a copy's suffix as libiberty's do, their C++ names differ in
//! about one in ten symbols of a C++ library (they write `(unsigned int)16`
//! where libiberty writes `16u`, spell out `std::istream`, and slip on a
//! few).

/// `name` demangled if it is mangled, as C++ and Rust names are (`_Z...`,
/// Rust's `_R...`); any other name is kept as it is, since a demangler
/// reads a short C name such as `f` or `Ss` as a type (`float`,
/// `std::string`). Valgrind 3.19 leaves D names (`_D...`) as they are too.
pub fn demangle(name: &str) -> String {
    if !name.starts_with("_Z") && !name.starts_with("_R") {
        return name.to_string();
    }
    // A name libiberty does not demangle stays as it is, as in Valgrind
    // (one of over a thousand characters that takes its printer past its
    // depth limit, which another demangler would demangle).
    #[cfg(libiberty)]
    return libiberty::demangle(name).unwrap_or_else(|| name.to_string());
    #[cfg(not(libiberty))]
    without_libiberty(name)
}

/// The `addr2line` crate's demangling, made to match libiberty's where it
/// can: a Rust name loses the suffix after a `.` that the compiler adds to
/// tell copies of a function apart (`box_new_uninit.1035`, `.llvm.1234`),
/// as libiberty drops it.
#[cfg(any(not(libiberty), test))]
fn without_libiberty(name: &str) -> String {
    use addr2line::gimli::{DW_LANG_C_plus_plus, DW_LANG_Rust};
    let unsuffixed = name.split('.').next().unwrap_or(name);
    if let Some(demangled) = addr2line::demangle(unsuffixed, DW_LANG_Rust) {
        return demangled;
    }
    addr2line::demangle(name, DW_LANG_C_plus_plus).unwrap_or_else(|| name.to_string())
}

#[cfg(libiberty)]
mod libiberty {
    use std::ffi::{CStr, CString, c_char, c_int, c_void};

    /// Valgrind's options: `const` and `volatile` shown, parameters listed.
    const DMGL_PARAMS: c_int = 1 << 0;
    const DMGL_ANSI: c_int = 1 << 1;

    unsafe extern "C" {
        /// libiberty's demangler: a `malloc`ed string, or null when `mangled`
        /// is not a name it knows.
        fn cplus_demangle(mangled: *const c_char, options: c_int) -> *mut c_char;
        fn free(pointer: *mut c_void);
    }

    pub fn demangle(name: &str) -> Option<String> {
        let mangled = CString::new(name).ok()?;
        // SAFETY: `mangled` is a valid NUL-terminated string that outlives
        // the call; the result is null or a string the caller owns.
        let demangled = unsafe { cplus_demangle(mangled.as_ptr(), DMGL_PARAMS | DMGL_ANSI) };
        if demangled.is_null() {
            return None;
        }
        // SAFETY: not null, so a NUL-terminated string from `malloc`,
        // read once and then freed, never used again.
        let text = unsafe { CStr::from_ptr(demangled) }
            .to_string_lossy()
            .into_owned();
        unsafe { free(demangled.cast()) };
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_names_stay_and_rust_names_lose_their_hash_and_suffix() {
        assert_eq!(demangle("Ss"), "Ss");
        assert_eq!(demangle("main"), "main");
        for demangle in [demangle, without_libiberty] {
            for suffix in ["", ".llvm.12345", ".123"] {
                assert_eq!(
                    demangle(&format!(
                        "_ZN3std2rt10lang_start17h0123456789abcdefE{suffix}"
                    )),
                    "std::rt::lang_start"
                );
            }
            // A v0 name, with the crate's disambiguator and a copy's suffix.
            for suffix in ["", ".1035"] {
                assert_eq!(
                    demangle(&format!(
                        "_RNvNtCslNYArtu3iFV_5alloc5boxed14box_new_uninit{suffix}"
                    )),
                    "alloc::boxed::box_new_uninit"
                );
            }
        }
    }

    #[cfg(libiberty)]
    #[test]
    fn cxx_names_are_libibertys() {
        // A reference type's nested name, and a pack of rvalue references.
        assert_eq!(
            demangle(
                "_ZNK10__cxxabiv120__si_class_type_info11__do_upcastEPKNS_17__class_type_infoEPKvRNS1_15__upcast_resultE"
            ),
            "__cxxabiv1::__si_class_type_info::__do_upcast(__cxxabiv1::__class_type_info const*, \
             void const*, __cxxabiv1::__class_type_info::__upcast_result&) const"
        );
        assert_eq!(demangle("_Z1fIJOiEEvDpOT_"), "void f<int&&>(int&&)");
        // A literal template argument, an empty pack.
        assert_eq!(
            demangle("_Z1fRN4llvm11SmallVectorIPKcLj16EEE"),
            "f(llvm::SmallVector<char const*, 16u>&)"
        );
        assert_eq!(
            demangle("_ZN4llvm10NewGVNPass3runERNS_8FunctionERNS_15AnalysisManagerIS1_JEEE"),
            "llvm::NewGVNPass::run(llvm::Function&, llvm::AnalysisManager<llvm::Function>&)"
        );
        // A pack of 30 long type names libiberty demangles; of 31, which
        // takes its printer past its depth limit, it does not, and neither
        // does Valgrind: the name stays mangled.
        let pack = |types: usize| {
            let names: String = (0..types)
                .map(|n| format!("31T{n:03}_abcdefghijklmnopqrstuvwxyz"))
                .collect();
            format!("_Z2lmIJ{names}EEiv")
        };
        assert!(demangle(&pack(30)).starts_with("int lm<T000_"));
        assert_eq!(demangle(&pack(31)), pack(31));
        assert_ne!(without_libiberty(&pack(31)), pack(31));
        // D names stay, as Valgrind 3.19 keeps them.
        assert_eq!(demangle("_D3foo3barFiZv"), "_D3foo3barFiZv");
    }
}
