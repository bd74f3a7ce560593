// The encodings of every chapter in the build, registered in one call.
#pragma once

namespace pe {

/// Registers the encodings of chapters 2.. that are in this build (chapter 1's "none" is
/// always there). Safe to call more than once.
void register_chapter_encodings();

}  // namespace pe
