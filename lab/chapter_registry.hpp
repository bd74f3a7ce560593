// The encodings a program may know, registered in one call.
#pragma once

namespace pe {

/// Registers the encodings of chapters 2.. that this program links (chapter 1's "none" is
/// always there): chapter N's experiment knows chapters 2..N, `pe` every chapter in the
/// build. Generated per program (pe_link_lab); calling it again changes nothing,
/// because registering the same encoding again is a no-op.
void register_chapter_encodings();

}  // namespace pe
