// Sources/CZstd/shim.h - the zstd API, imported into Swift as CZstd
#include <zstd.h>
#include <zstd_errors.h>
