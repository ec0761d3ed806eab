/* Input to bindgen for sys/src/rocm_smi.rs (see sys/regen.sh); never compiled into anything.
 *
 * Debian's librocm-smi-dev (5.2.3) predates the socket-power API that ROCm 6 added. abprof binds
 * it anyway, because newer libraries (Ubuntu's librocm-smi64-7, ROCm's own) have it and the
 * bindings look each symbol up separately at run time: on 5.2.3 those two calls are simply
 * reported missing. The declarations at the end restate the ROCm 6+ rocm_smi.h prototypes; regen.sh
 * defines ABPROF_HEADER_HAS_POWER_GET when the installed header already declares them. */
#include <stdbool.h>
#include <rocm_smi/rocm_smi.h>

/* rsmi_frequencies_t as ROCm 6.0 and later lay it out (has_deep_sleep first, 33 entries), where
 * Debian's 5.2.3 header has {num_supported, current, frequency[32]}. The safe layer picks the
 * layout from rsmi_version_get's major version (<= 5: old, >= 6: this one). */
typedef struct {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[33];
} abprof_rsmi_frequencies_v6_t;

#ifndef ABPROF_HEADER_HAS_POWER_GET
typedef enum {
  RSMI_AVERAGE_POWER = 0,
  RSMI_CURRENT_POWER,
  RSMI_INVALID_POWER = 0xFFFFFFFF
} RSMI_POWER_TYPE;

rsmi_status_t rsmi_dev_current_socket_power_get(uint32_t dv_ind, uint64_t *socket_power);
rsmi_status_t rsmi_dev_power_get(uint32_t dv_ind, uint64_t *power, RSMI_POWER_TYPE *type);
#endif
