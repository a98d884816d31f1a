#pragma once
// Which shard of a calibration this process runs: `--shard I/N` as typed, or `auto`, read from
// the environment a job scheduler gives each task of an array job (Slurm job arrays, Kubernetes
// Indexed Jobs, MPI launchers), so that one job script serves every task (docs/cluster.md).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace specd {

struct ShardSource {
  int32_t index = 0, count = 1;
  // The scheduler the shard came from ("slurm", "kubernetes", "mpi"; "" when typed or absent) and
  // its ids of the job and of this task, recorded in the calibration's provenance.
  std::string scheduler, job_id, task_id;
  // {"scheduler", "job_id", "task_id"}; null when no scheduler ran this process.
  nlohmann::json job_json() const;
};

// A variable of the environment, or nullopt when unset.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
Environment process_environment();

// text is "I/N"; "auto" or "auto/N" (N: the shard count; needed where the scheduler does not give
// it; inside a Slurm array it wins over the array's size, whose tasks may rerun some of N shards;
// under an MPI launcher it must equal the size); or "" (not given: "auto" inside a Slurm array
// job, else 0/1).
// Auto takes I from SLURM_ARRAY_TASK_ID (the array's indices are the shard indices, so a rerun of
// some indices keeps them: give N then), JOB_COMPLETION_INDEX (Kubernetes, needs N), or an MPI
// launcher's rank and size (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, srun's SLURM_PROCID/NTASKS).
// InputError naming --shard for anything else, or when the environment and N disagree.
ShardSource resolve_shard(const std::string& text, const Environment& env);

}  // namespace specd
