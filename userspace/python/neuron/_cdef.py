# SPDX-License-Identifier: MIT
"""The part of libneuron/neuron.h the module calls, for cffi's ABI mode
(docs/decisions/0045-python-cffi.md). The structs are copied field for
field from the header; tests/test_python.py checks their sizes against
the C compiler's (test_struct_sizes_match_the_header)."""

CDEF = """
typedef struct libneuron_device libneuron_device;
typedef struct libneuron_queue libneuron_queue;
typedef struct libneuron_program libneuron_program;
typedef struct libneuron_result libneuron_result;

struct libneuron_record { uint8_t bytes[16]; };
struct libneuron_decoded {
    uint32_t kind; uint8_t notific_type; uint8_t sw_overflow; uint8_t hw_overflow; uint8_t phase;
    int32_t engine; uint32_t program_counter; uint32_t debug_hint; uint32_t debug_hint_extended;
    uint32_t error_id; uint32_t value; uint64_t timestamp_ps; char text[192];
};
struct libneuron_version_info { uint32_t major; uint32_t minor; uint32_t patch; };
struct libneuron_device_info {
    uint32_t num_cores; uint32_t engines_per_core; uint32_t queues_per_core; uint32_t generation;
    uint64_t capabilities; uint64_t mem_size; uint64_t mem_alloc_limit;
    uint32_t nq_size_min; uint32_t nq_size_max; uint32_t max_program_insns; uint32_t timestamp_inc_ps;
    uint32_t page_size; uint32_t doorbell_size; uint64_t reserved[3];
};
struct libneuron_event {
    uint64_t timestamp_ns; uint32_t device; uint32_t core; uint32_t edge; uint32_t cause;
    uint32_t queues; uint32_t lost; uint64_t count; uint32_t wrbuf_full; uint32_t wrbuf_drop;
    uint32_t suppressed; uint32_t pc; uint64_t reserved[1];
};
struct libneuron_exec_record { uint32_t core; uint32_t queue; struct libneuron_record raw; };
struct libneuron_exec_options {
    size_t size; int64_t timeout_ms; uint32_t flags; uint32_t queue_size; uint32_t queue_flags;
    uint32_t reserved; const char *cores;
    int (*on_record)(void *arg, const struct libneuron_exec_record *rec); void *arg;
};
struct libneuron_exec_summary {
    size_t size; int32_t status; uint32_t completed; int32_t error; int32_t callback_error;
    uint32_t has_first_error; uint32_t reserved; uint64_t records; uint64_t events; uint64_t lost;
    uint64_t device_lost; uint64_t throttle_records; uint64_t cores_acquired; uint64_t elapsed_ns;
    struct libneuron_exec_record first_error;
};

struct libneuron_version_info libneuron_version(void);
const char *libneuron_last_error(void);
int libneuron_device_open(const char *path, libneuron_device **out);
int libneuron_device_open_read_only(const char *path, libneuron_device **out);
void libneuron_device_close(libneuron_device *dev);
int libneuron_device_get_info(libneuron_device *dev, struct libneuron_device_info *out);
int libneuron_device_state(const libneuron_device *dev);
int libneuron_core_acquire(libneuron_device *dev, uint64_t cores, uint64_t *owned);
int libneuron_core_release(libneuron_device *dev, uint64_t cores, uint64_t *owned);
long libneuron_device_read_events(libneuron_device *dev, struct libneuron_event *out, size_t max,
                                  long long timeout_ns);
int libneuron_device_submit(libneuron_device *dev, unsigned core, unsigned engine, const void *insns,
                            size_t count, uint32_t flags);
int libneuron_engine_reset(libneuron_device *dev, unsigned core, unsigned engine);
int libneuron_mem_alloc(libneuron_device *dev, uint64_t size, uint64_t fixed_offset, uint32_t flags,
                        uint64_t *offset);
int libneuron_mem_free(libneuron_device *dev, uint64_t offset);
int libneuron_queue_create(libneuron_device *dev, unsigned core, unsigned queue, uint32_t size_bytes,
                           uint32_t flags, libneuron_queue **out);
void libneuron_queue_destroy(libneuron_queue *q);
long libneuron_queue_drain(libneuron_queue *q, struct libneuron_record *out, size_t max, uint64_t *lost);
long libneuron_queue_wait(libneuron_queue *q, struct libneuron_record *out, size_t max, long long timeout_ns,
                          uint64_t *lost);
int libneuron_queue_decode(const libneuron_queue *q, const struct libneuron_record *rec,
                           struct libneuron_decoded *out);
int libneuron_record_decode(const struct libneuron_record *rec, int queue, struct libneuron_decoded *out);
int libneuron_program_assemble(const char *text, size_t len, const char *name, libneuron_program **out);
int libneuron_program_assemble_file(const char *path, libneuron_program **out);
void libneuron_program_free(libneuron_program *prog);
int libneuron_execute(libneuron_device *dev, const libneuron_program *prog,
                      const struct libneuron_exec_options *opt, libneuron_result **out);
int libneuron_result_summary(const libneuron_result *res, struct libneuron_exec_summary *out);
long libneuron_result_records(const libneuron_result *res, size_t first, struct libneuron_exec_record *out,
                              size_t max);
int libneuron_result_decode(const libneuron_result *res, size_t index, struct libneuron_decoded *out);
long libneuron_result_events(const libneuron_result *res, size_t first, struct libneuron_event *out,
                             size_t max);
const char *libneuron_result_error(const libneuron_result *res);
void libneuron_result_free(libneuron_result *res);
const char *libneuron_exec_status_name(int status);
"""
