// dispatch.h — from a device to its backend, and the support question.
#ifndef CTENSOR_SRC_CORE_DISPATCH_H_
#define CTENSOR_SRC_CORE_DISPATCH_H_

#include "core/backend.h"

namespace ct {

// The backends built into this library (core knows them only by this table).
namespace cpu { const CTBackend* backend(); }

// The backend for a device type, or nullptr when this build has none.
const CTBackend* backend_for(int32_t device_type);

// CT_OK if `device` exists; else a message naming fn and arg.
CTStatus check_device(const char* fn, const char* arg, CTDevice device, const CTBackend** backend);

// CT_OK if op runs on device for (data) dtype; else says why, naming fn.
CTStatus check_supported(const char* fn, int32_t op, CTDevice device, CTDataType dtype);

}  // namespace ct

#endif  // CTENSOR_SRC_CORE_DISPATCH_H_
