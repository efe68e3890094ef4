#pragma once
// Light and dark palettes (Fusion style, so they look the same on every platform). Views re-read
// the palette on QEvent::PaletteChange.
#include "gui/settings.hpp"

#include <QPalette>

namespace parallax::app {

QPalette light_palette();
QPalette dark_palette();
void apply_theme(Theme t);

} // namespace parallax::app
