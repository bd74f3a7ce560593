// Chapter 11's encodings and rope types, registered: Hugging Face's rope types as options of
// "rope", the per-layer hybrids (local and global layers, NoPE layers with a temperature) and
// PoPE.
#pragma once

namespace pe {

/// Adds chapter 11's encodings to the registry and its rope types to "rope".
void register_ch11_encodings();

}  // namespace pe
