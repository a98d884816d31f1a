#include "artifact/artifact_arrays.h"

#include "util/error.h"

namespace specd {
namespace {

constexpr const char* kRejections = "/csd/rejections";
constexpr const char* kSamTokens = "/sam_corpus/tokens";
constexpr const char* kSamOffsets = "/sam_corpus/offsets";
const char* const kRejectionColumns[] = {"prompt", "step", "depth", "draft_token", "target_token"};

std::string rejection_column(const char* name) { return std::string(kRejections) + "/" + name; }

}  // namespace

void write_artifact_arrays(const std::string& path, const Artifact& artifact) {
  Hdf5File file = Hdf5File::create(path);
  file.write_root_attribute("schema_version", kArtifactH5Version);
  if (artifact.csd) {
    const std::vector<CsdRejection>& rows = artifact.csd->rejections;
    std::vector<int32_t> columns[5];
    std::vector<float> gaps;
    for (const CsdRejection& r : rows) {
      columns[0].push_back(r.prompt);
      columns[1].push_back(r.step);
      columns[2].push_back(r.depth);
      columns[3].push_back(r.draft_token);
      columns[4].push_back(r.target_token);
      gaps.push_back(r.logit_gap);
    }
    for (int c = 0; c < 5; ++c) file.write(rejection_column(kRejectionColumns[c]), columns[c]);
    file.write(rejection_column("logit_gap"), gaps);
  }
  if (artifact.sam_corpus) {
    std::vector<int32_t> tokens;
    std::vector<int64_t> offsets{0};
    for (const std::vector<int32_t>& document : artifact.sam_corpus->documents) {
      tokens.insert(tokens.end(), document.begin(), document.end());
      offsets.push_back(static_cast<int64_t>(tokens.size()));
    }
    file.write(kSamTokens, tokens);
    file.write(kSamOffsets, offsets);
  }
  file.close();
}

Hdf5File open_artifact_arrays(const std::string& path) {
  Hdf5File file = Hdf5File::open_read(path);
  const int64_t version = file.read_root_attribute("schema_version");
  if (version != kArtifactH5Version)
    input_error(path, "schema version " + std::to_string(version) + ", this specd reads " + std::to_string(kArtifactH5Version));
  return file;
}

bool has_csd_rejections(const Hdf5File& file) { return file.exists("/csd"); }
bool has_sam_corpus(const Hdf5File& file) { return file.exists("/sam_corpus"); }

std::vector<CsdRejection> read_csd_rejections(const Hdf5File& file) {
  std::vector<int32_t> columns[5];
  for (int c = 0; c < 5; ++c) columns[c] = file.read_int32(rejection_column(kRejectionColumns[c]));
  const std::vector<float> gaps = file.read_float32(rejection_column("logit_gap"));
  const size_t rows = columns[0].size();
  auto check_length = [&](size_t length, const char* name) {
    if (length != rows)
      input_error(file.path(), rejection_column(name) + " has " + std::to_string(length) + " rows, " +
                                   rejection_column(kRejectionColumns[0]) + " " + std::to_string(rows));
  };
  for (int c = 1; c < 5; ++c) check_length(columns[c].size(), kRejectionColumns[c]);
  check_length(gaps.size(), "logit_gap");
  std::vector<CsdRejection> rejections(rows);
  for (size_t i = 0; i < rows; ++i)
    rejections[i] = {columns[0][i], columns[1][i], columns[2][i], columns[3][i], columns[4][i], gaps[i]};
  return rejections;
}

std::vector<std::vector<int32_t>> read_sam_documents(const Hdf5File& file) {
  const std::vector<int32_t> tokens = file.read_int32(kSamTokens);
  const std::vector<int64_t> offsets = file.read_int64(kSamOffsets);
  if (offsets.empty() || offsets.front() != 0) input_error(file.path(), std::string(kSamOffsets) + " must start with 0");
  if (offsets.back() != static_cast<int64_t>(tokens.size()))
    input_error(file.path(), std::string(kSamOffsets) + " ends at " + std::to_string(offsets.back()) + ", " + kSamTokens +
                                 " has " + std::to_string(tokens.size()) + " rows");
  std::vector<std::vector<int32_t>> documents;
  for (size_t i = 1; i < offsets.size(); ++i) {
    // Checked before the copy: a middle offset beyond the tokens is found by the next row only.
    if (offsets[i] < offsets[i - 1]) input_error(file.path(), std::string(kSamOffsets) + " decreases at row " + std::to_string(i));
    if (offsets[i] > offsets.back())
      input_error(file.path(), std::string(kSamOffsets) + " row " + std::to_string(i) + " is beyond the last offset");
    documents.emplace_back(tokens.begin() + offsets[i - 1], tokens.begin() + offsets[i]);
  }
  return documents;
}

}  // namespace specd
