// The geohash arithmetic behind the GEO commands, as Redis 7.0 does it, so that scores,
// coordinates, distances and search results come out bit for bit the same.
//
// A position is stored as a sorted set score: longitude and latitude are each scaled to a
// 26-bit cell index over [-180, 180] and [-85.05112878, 85.05112878] (the Web Mercator limits:
// the poles cannot be indexed), and the two indexes are interleaved, latitude on the even bits
// and longitude on the odd ones, into a 52-bit integer ("step 26"). Scores below 2^53 are exact
// doubles, and cells that share a prefix of the interleaved bits are neighbours in score order,
// so one box of the grid at a coarser step is one score interval of the sorted set.
//
// A search (radius or box) picks the coarsest step whose cells are about the size of the area,
// takes the cell of the centre and its eight neighbours (dropping those that cannot hold a
// match), scans each one's score interval, and keeps the points that the exact test accepts.
// Distances use the haversine formula on a sphere of Redis's radius (6372797.560856 m).
//
// Everything here is plain arithmetic with no allocation; the command layer walks the sorted
// set. Operation order matters for the last bit of each double, so the formulas keep Redis's.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace keywarden::geo {

inline constexpr double kLongitudeMin = -180;
inline constexpr double kLongitudeMax = 180;
inline constexpr double kLatitudeMin = -85.05112878;
inline constexpr double kLatitudeMax = 85.05112878;
// Cells per axis at the finest step are 2^kStepMax.
inline constexpr uint8_t kStepMax = 26;
// The Earth's quadratic mean radius (WGS-84), the sphere of every distance.
inline constexpr double kEarthRadiusMeters = 6372797.560856;
// Half the Earth's circumference at the equator in Web Mercator metres: a radius this large
// needs the coarsest grid.
inline constexpr double kMercatorMax = 20037726.37;

// A cell of the grid at some step: 2*step interleaved bits. All zero marks "no cell" (a
// neighbour excluded from a search).
struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool is_zero() const { return bits == 0 && step == 0; }
};

struct Range {
  double min = 0;
  double max = 0;
};

// The longitude and latitude intervals a cell covers.
struct Area {
  Range longitude;
  Range latitude;
};

// The longitude and latitude ranges of stored positions.
inline constexpr Range kLongitudeRange{kLongitudeMin, kLongitudeMax};
inline constexpr Range kLatitudeRange{kLatitudeMin, kLatitudeMax};
// The ranges of a standard geohash (GEOHASH re-encodes into these).
inline constexpr Range kStandardLatitudeRange{-90, 90};

// Whether a longitude,latitude pair may be stored (GEOADD, FROMLONLAT and GEORADIUS check it).
inline bool valid_coordinates(double longitude, double latitude) {
  return !(longitude < kLongitudeMin || longitude > kLongitudeMax || latitude < kLatitudeMin ||
           latitude > kLatitudeMax);
}

// The cell of (longitude, latitude) at `step` within the given ranges; false when step is not
// in 1..32 or the point lies outside the ranges or the storable limits.
bool encode(Range longitude_range, Range latitude_range, double longitude, double latitude,
            uint8_t step, HashBits* out);
// The cell's intervals; false for the zero cell.
bool decode(Range longitude_range, Range latitude_range, HashBits hash, Area* out);

// The sorted set score of a position (GEOADD): the step-26 cell's bits.
uint64_t score_of(double longitude, double latitude);
// The cell bits of a score as Redis reads them (a C cast of the double to uint64_t, with
// x86-64's results for values it cannot represent: negative scores wrap, scores >= 2^64 give
// 0), so that a sorted set member added by ZADD decodes as it does in Redis.
uint64_t bits_of_score(double score);
// The position a score stands for: the centre of its step-26 cell, clamped to the storable
// limits. Always succeeds (Redis's decode fails only for the zero cell, which step 26 is not).
void position_of_score(double score, double* longitude, double* latitude);

// `hash` shifted to the 52-bit score scale: the lowest score of the cell's interval.
inline uint64_t align52(HashBits hash) { return hash.bits << (52 - hash.step * 2); }

// The eight cells around `hash`, in the order the search visits them after the centre.
struct Neighbors {
  HashBits north, south, east, west, north_east, north_west, south_east, south_west;
};
Neighbors neighbors_of(HashBits hash);

// The great-circle distance in metres (haversine on kEarthRadiusMeters; the plain latitude arc
// when the longitudes are the same, as Redis 7.0.15 computes it).
double distance(double longitude1, double latitude1, double longitude2, double latitude2);
// The arc between two latitudes along a meridian, in metres.
double latitude_distance(double latitude1, double latitude2);
// Whether (lon2, lat2) is within an axis-aligned box of width_m × height_m metres centred on
// (lon1, lat1), measured along the centre's meridian and the point's parallel; when it is,
// *distance gets the great-circle distance between the two.
bool distance_if_in_box(double width_m, double height_m, double longitude1, double latitude1,
                        double longitude2, double latitude2, double* distance_out);

// The grid step whose cells suit a search of `radius_meters` around `latitude` (coarser near
// the poles, where meridians converge).
uint8_t estimate_steps_by_radius(double radius_meters, double latitude);

// A search area: a circle of `radius` or a box of `width` × `height`, in the unit whose size
// in metres is `conversion`, centred on (longitude, latitude).
struct Shape {
  enum class Kind : uint8_t { kCircle, kBox };
  Kind kind = Kind::kCircle;
  double longitude = 0;
  double latitude = 0;
  double conversion = 1;
  double radius = 0;
  double width = 0;
  double height = 0;

  // Whether the point at (longitude, latitude) is in the area; *distance_meters gets its
  // distance from the centre when it is.
  bool contains(double point_longitude, double point_latitude, double* distance_meters) const;
};

// The bounding box of a shape: min longitude, min latitude, max longitude, max latitude.
std::array<double, 4> bounding_box(const Shape& shape);

// The cells a search scans, in Redis's order: the centre's, then north, south, east, west,
// north-east, north-west, south-east, south-west; cells that cannot hold a match are zero.
std::array<HashBits, 9> search_cells(const Shape& shape);

// The score interval [*min, *max) of every step-26 position inside `cell`.
inline void score_range_of_cell(HashBits cell, uint64_t* min, uint64_t* max) {
  *min = align52(cell);
  ++cell.bits;
  *max = align52(cell);
}

// The 11-character standard geohash (latitude over [-90, 90]) of a stored position, as GEOHASH
// prints it: ten characters from the 52 bits, then '0' (the API once printed 55 bits).
std::array<char, 11> standard_geohash(double longitude, double latitude);

}  // namespace keywarden::geo
