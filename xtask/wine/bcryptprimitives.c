/* bcryptprimitives.dll for Wine 8, which lacks it: Rust's std on Windows draws its
 * random bytes (HashMap keys) from ProcessPrng, exported by this DLL since Windows 10.
 * This one answers ProcessPrng from RtlGenRandom (advapi32's SystemFunction036), which
 * Wine has. Built by `cargo xtask windows` into its Wine prefix's system32; never
 * shipped. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length; SIZE_T is 64 bits here. */
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
