#pragma once
// The imported cluster: a cluster preset's GPU and fabrics (--cluster, or the default) sized to the GPU
// count the file gives (a launcher's nodes x GPUs per node), --gpus, or the documented default.
#include "io/import/import_draft.hpp"
#include "io/preset_catalog.hpp"

#include <nlohmann/json.hpp>

namespace parallax {

struct ImportedCluster {
    nlohmann::ordered_json json; // the scenario's inline "cluster" object (GPU and fabrics by preset name)
    long long gpus = 0;
};

// Reports the choice of preset and GPU count; throws InputError when the preset is unknown or the GPUs
// do not fill whole nodes.
ImportedCluster finish_import_cluster(ImportDraft& draft, const ImportOptions& options, const PresetCatalog& catalog);

} // namespace parallax
