#include "shard_source.h"

#include <cstdlib>
#include <limits>

#include "util/error.h"

namespace specd {
namespace {

[[noreturn]] void shard_error(const std::string& what) { input_error("--shard", what); }

// A non-negative int32 written in decimal digits only, or nullopt.
std::optional<int64_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > std::numeric_limits<int32_t>::max()) return std::nullopt;
  return value;
}

int64_t env_number(const Environment& env, const std::string& name) {
  const std::optional<std::string> text = env(name);
  if (!text) shard_error("auto: " + name + " is not set");
  const std::optional<int64_t> value = parse_count(*text);
  if (!value) shard_error("auto: " + name + " must be a non-negative integer (got '" + *text + "')");
  return *value;
}

ShardSource checked(ShardSource s, std::optional<int64_t> typed_count, const std::string& from) {
  if (typed_count && *typed_count != s.count)
    shard_error("auto/" + std::to_string(*typed_count) + ": " + from + " gives " + std::to_string(s.count) + " shards");
  if (s.count < 1 || s.index >= s.count)
    shard_error("auto: " + from + " gives shard " + std::to_string(s.index) + " of " + std::to_string(s.count) +
                " (the shard indices must be 0..N-1)");
  return s;
}

ShardSource from_slurm_array(const Environment& env, std::optional<int64_t> typed_count) {
  ShardSource s;
  s.scheduler = "slurm";
  s.index = static_cast<int32_t>(env_number(env, "SLURM_ARRAY_TASK_ID"));
  s.job_id = env("SLURM_ARRAY_JOB_ID").value_or("");
  s.task_id = std::to_string(s.index);
  if (typed_count) {
    s.count = static_cast<int32_t>(*typed_count);
    return checked(s, std::nullopt, "SLURM_ARRAY_TASK_ID");
  }
  // The array itself gives the count only when it is the whole of 0..N-1.
  const int64_t min = env_number(env, "SLURM_ARRAY_TASK_MIN"), max = env_number(env, "SLURM_ARRAY_TASK_MAX");
  const int64_t count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
  if (min != 0 || count != max + 1)
    shard_error("auto: this array holds " + std::to_string(count) + " tasks from " + std::to_string(min) + " to " + std::to_string(max) +
                ", not 0..N-1 (a rerun of some indices?): give the shard count, --shard auto/N");
  s.count = static_cast<int32_t>(count);
  return checked(s, std::nullopt, "the Slurm array");
}

}  // namespace

nlohmann::json ShardSource::job_json() const {
  if (scheduler.empty()) return nullptr;
  return {{"scheduler", scheduler}, {"job_id", job_id}, {"task_id", task_id}};
}

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

ShardSource resolve_shard(const std::string& text, const Environment& env) {
  const bool in_array = env("SLURM_ARRAY_TASK_ID").has_value();
  if (text.empty()) return in_array ? from_slurm_array(env, std::nullopt) : ShardSource{};

  std::optional<int64_t> typed_count;
  const size_t slash = text.find('/');
  const std::string head = text.substr(0, slash);
  if (slash != std::string::npos) {
    typed_count = parse_count(text.substr(slash + 1));
    if (!typed_count || *typed_count < 1) shard_error("must be I/N, auto or auto/N with N >= 1 (got '" + text + "')");
  }
  if (head != "auto") {
    const std::optional<int64_t> index = parse_count(head);
    if (!index || !typed_count) shard_error("must be I/N, auto or auto/N, e.g. 0/4 (got '" + text + "')");
    if (*index >= *typed_count) shard_error("needs 0 <= I < N (got '" + text + "')");
    ShardSource s;
    s.index = static_cast<int32_t>(*index);
    s.count = static_cast<int32_t>(*typed_count);
    // Typed inside a scheduler's job: still record which job ran it.
    if (in_array) {
      s.scheduler = "slurm";
      s.job_id = env("SLURM_ARRAY_JOB_ID").value_or("");
      s.task_id = *env("SLURM_ARRAY_TASK_ID");
    }
    return s;
  }

  if (in_array) return from_slurm_array(env, typed_count);
  if (const std::optional<std::string> index = env("JOB_COMPLETION_INDEX")) {
    if (!typed_count) shard_error("auto: a Kubernetes Indexed Job gives no shard count: give it, --shard auto/N");
    ShardSource s;
    s.scheduler = "kubernetes";
    s.index = static_cast<int32_t>(env_number(env, "JOB_COMPLETION_INDEX"));
    s.count = static_cast<int32_t>(*typed_count);
    s.job_id = env("HOSTNAME").value_or("");  // the pod's name: the job's name and the index
    s.task_id = *index;
    return checked(s, std::nullopt, "JOB_COMPLETION_INDEX");
  }
  // MPI launchers: Open MPI, then MPICH/Intel MPI (PMI), then Slurm's srun.
  for (const auto& [rank, size] : {std::pair<const char*, const char*>{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                   {"PMI_RANK", "PMI_SIZE"},
                                   {"SLURM_PROCID", "SLURM_NTASKS"}}) {
    if (!env(rank)) continue;
    ShardSource s;
    s.scheduler = "mpi";
    s.index = static_cast<int32_t>(env_number(env, rank));
    s.count = static_cast<int32_t>(std::min<int64_t>(env_number(env, size), std::numeric_limits<int32_t>::max()));
    s.job_id = env("SLURM_JOB_ID").value_or("");
    s.task_id = std::to_string(s.index);
    return checked(s, typed_count, std::string(rank) + " and " + size);
  }
  shard_error("auto: no scheduler's task index in the environment (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, "
              "OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID); give --shard I/N");
}

}  // namespace specd
