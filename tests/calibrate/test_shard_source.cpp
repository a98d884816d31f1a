// --shard from a job scheduler's environment: the index and count each scheduler's variables give,
// the ids recorded, and one error naming --shard for every environment that cannot say.
#include <catch2/catch.hpp>

#include <map>

#include "calibrate/shard_source.h"
#include "test_helpers.h"
#include "util/error.h"

using namespace specd;

namespace {

Environment env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The environment of task `id` of `sbatch --array=MIN-MAX` (Slurm 22.05 sets these).
Environment slurm_task(int id, int min, int max, const std::string& job = "41") {
  return env_of({{"SLURM_ARRAY_JOB_ID", job},
                 {"SLURM_ARRAY_TASK_ID", std::to_string(id)},
                 {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
                 {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
                 {"SLURM_ARRAY_TASK_COUNT", std::to_string(max - min + 1)},
                 {"SLURM_JOB_ID", std::to_string(100 + id)},
                 {"SLURM_PROCID", "0"},
                 {"SLURM_NTASKS", "1"}});
}

std::string shard_error(const std::string& text, const Environment& env) {
  return test::input_error_message([&] { resolve_shard(text, env); });
}

}  // namespace

TEST_CASE("shard: typed I/N, and 0/1 outside any scheduler", "[shard]") {
  const Environment none = env_of({});
  ShardSource s = resolve_shard("2/5", none);
  CHECK(s.index == 2);
  CHECK(s.count == 5);
  CHECK(s.job_json().is_null());
  s = resolve_shard("", none);
  CHECK(s.index == 0);
  CHECK(s.count == 1);
  CHECK(s.scheduler.empty());
  for (const char* bad : {"5/5", "1", "-1/3", "a/3", "1/0", "1/b", "auto/0", "auto/x", "1/99999999999", " 1/2", "1/2 "})
    CHECK(shard_error(bad, none).rfind("--shard: ", 0) == 0);
  CHECK(shard_error("auto", none).find("no scheduler's task index") != std::string::npos);
}

TEST_CASE("shard: auto from a Slurm job array, the default inside one", "[shard]") {
  for (const std::string text : {"auto", "", "auto/3"}) {
    const ShardSource s = resolve_shard(text, slurm_task(1, 0, 2));
    CAPTURE(text);
    CHECK(s.index == 1);
    CHECK(s.count == 3);
    CHECK(s.job_json() == nlohmann::json{{"scheduler", "slurm"}, {"job_id", "41"}, {"task_id", "1"}});
  }
  // A typed shard inside an array job still records the job.
  const ShardSource typed = resolve_shard("0/2", slurm_task(1, 0, 2));
  CHECK(typed.index == 0);
  CHECK(typed.job_json()["task_id"] == "1");
  // A rerun of one index (sbatch --array=1) keeps the index; the count must be given.
  CHECK(shard_error("auto", slurm_task(1, 1, 1)).find("give the shard count, --shard auto/N") != std::string::npos);
  const ShardSource rerun = resolve_shard("auto/3", slurm_task(1, 1, 1, "57"));
  CHECK(rerun.index == 1);
  CHECK(rerun.count == 3);
  CHECK(rerun.job_id == "57");
  // A count given wins over the array's (these tasks may rerun some of N shards); an index
  // outside the count is refused.
  CHECK(resolve_shard("auto/4", slurm_task(1, 0, 2)).count == 4);
  CHECK(shard_error("auto/2", slurm_task(2, 2, 2)).find("shard 2 of 2") != std::string::npos);
  CHECK(shard_error("auto/3", slurm_task(3, 0, 3)).find("shard 3 of 3") != std::string::npos);
  CHECK(shard_error("auto", env_of({{"SLURM_ARRAY_TASK_ID", "x"}})).find("SLURM_ARRAY_TASK_ID must be") != std::string::npos);
}

TEST_CASE("shard: auto from a Kubernetes Indexed Job and from MPI launchers", "[shard]") {
  const Environment pod = env_of({{"JOB_COMPLETION_INDEX", "3"}, {"HOSTNAME", "calibrate-3-abcde"}});
  CHECK(shard_error("auto", pod).find("auto/N") != std::string::npos);
  const ShardSource k = resolve_shard("auto/4", pod);
  CHECK(k.index == 3);
  CHECK(k.count == 4);
  CHECK(k.scheduler == "kubernetes");
  CHECK(k.job_id == "calibrate-3-abcde");
  CHECK(shard_error("auto/3", pod).find("shard 3 of 3") != std::string::npos);

  const ShardSource ompi = resolve_shard("auto", env_of({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "8"}}));
  CHECK(ompi.index == 2);
  CHECK(ompi.count == 8);
  CHECK(ompi.scheduler == "mpi");
  const ShardSource pmi = resolve_shard("auto/4", env_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "4"}}));
  CHECK(pmi.index == 0);
  CHECK(pmi.count == 4);
  const ShardSource srun = resolve_shard("auto", env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "9"}}));
  CHECK(srun.index == 1);
  CHECK(srun.job_id == "9");
  CHECK(shard_error("auto/5", env_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "4"}})).find("gives 4 shards") != std::string::npos);
  CHECK(shard_error("auto", env_of({{"PMI_RANK", "0"}})).find("PMI_SIZE is not set") != std::string::npos);
  // Not given outside a Slurm array: one shard, even under an MPI launcher.
  CHECK(resolve_shard("", env_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}})).count == 1);
}
