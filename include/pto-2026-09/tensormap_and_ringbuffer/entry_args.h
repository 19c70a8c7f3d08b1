// tensormap_and_ringbuffer/entry_args.h (2026-09): Simpler's entry-argument storage header (the storage class itself is runtime-internal and not provided); everything it declares is part of tensor.h here, so it forwards there.
#pragma once

#include <tensor.h>
