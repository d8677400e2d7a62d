// Found only through -I inc2 (include_path_define.args); needs -D TILE.
#pragma once
#ifndef TILE
#error "TILE must be defined (-D TILE=32)"
#endif
constexpr int kTileElems = TILE * TILE;
