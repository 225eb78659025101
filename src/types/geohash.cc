// Redis 7.0's geohash arithmetic (see geohash.h). Formulas keep Redis's operation order: a
// reordered product can change the last bit of a coordinate, and with it a printed digit or
// whether a point on the edge of a search is in.
#include "types/geohash.h"

#include <cmath>
#include <numbers>

namespace keywarden::geo {

namespace {

constexpr double kDegreesToRadians = std::numbers::pi / 180.0;

double to_radians(double degrees) { return degrees * kDegreesToRadians; }
double to_degrees(double radians) { return radians / kDegreesToRadians; }

// Spreads the low 32 bits of `value` onto the even bits of the result.
uint64_t spread_bits(uint64_t value) {
  value = (value | (value << 16)) & 0x0000FFFF0000FFFFULL;
  value = (value | (value << 8)) & 0x00FF00FF00FF00FFULL;
  value = (value | (value << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  value = (value | (value << 2)) & 0x3333333333333333ULL;
  value = (value | (value << 1)) & 0x5555555555555555ULL;
  return value;
}

// Gathers the even bits of `value` into the low 32 bits of the result.
uint64_t gather_bits(uint64_t value) {
  value &= 0x5555555555555555ULL;
  value = (value | (value >> 1)) & 0x3333333333333333ULL;
  value = (value | (value >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  value = (value | (value >> 4)) & 0x00FF00FF00FF00FFULL;
  value = (value | (value >> 8)) & 0x0000FFFF0000FFFFULL;
  value = (value | (value >> 16)) & 0x00000000FFFFFFFFULL;
  return value;
}

// Latitude index on the even bits, longitude index on the odd ones.
uint64_t interleave(uint32_t latitude_index, uint32_t longitude_index) {
  return spread_bits(latitude_index) | (spread_bits(longitude_index) << 1);
}

// x86-64's cvttsd2si: the truncated value when it fits an int64_t, else 2^63 (the "integer
// indefinite" value), NaN included.
uint64_t truncate_to_int64_bits(double value) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(value >= -kTwoTo63 && value < kTwoTo63)) return uint64_t{1} << 63;
  return static_cast<uint64_t>(static_cast<int64_t>(value));
}

// Moves a cell one step along longitude (the odd bits) or latitude (the even bits), wrapping
// around at the edges of the grid: the carry runs through the other axis's bits, which are
// set to 1 (or masked away) for the operation.
HashBits move(HashBits hash, bool longitude_axis, int direction) {
  const unsigned shift = 64 - hash.step * 2;
  const uint64_t moving_mask = longitude_axis ? 0xaaaaaaaaaaaaaaaaULL : 0x5555555555555555ULL;
  const uint64_t other_mask = ~moving_mask;
  uint64_t moving = hash.bits & moving_mask;
  const uint64_t other = hash.bits & other_mask;
  const uint64_t filler = other_mask >> shift;
  if (direction > 0) {
    moving = moving + (filler + 1);
  } else {
    moving = moving | filler;
    moving = moving - (filler + 1);
  }
  moving &= moving_mask >> shift;
  hash.bits = moving | other;
  return hash;
}

}  // namespace

bool encode(Range longitude_range, Range latitude_range, double longitude, double latitude,
            uint8_t step, HashBits* out) {
  if (step > 32 || step == 0) return false;
  if (latitude_range.min == 0 && latitude_range.max == 0) return false;
  if (longitude_range.min == 0 && longitude_range.max == 0) return false;
  if (!valid_coordinates(longitude, latitude)) return false;
  out->bits = 0;
  out->step = step;
  if (latitude < latitude_range.min || latitude > latitude_range.max ||
      longitude < longitude_range.min || longitude > longitude_range.max) {
    return false;
  }
  double latitude_offset =
      (latitude - latitude_range.min) / (latitude_range.max - latitude_range.min);
  double longitude_offset =
      (longitude - longitude_range.min) / (longitude_range.max - longitude_range.min);
  // Fixed point at the step's scale. The offsets are in [0, 1], so the indexes are in
  // [0, 2^step]: the top edge gets an index one past the grid, as in Redis.
  latitude_offset *= static_cast<double>(uint64_t{1} << step);
  longitude_offset *= static_cast<double>(uint64_t{1} << step);
  out->bits =
      interleave(static_cast<uint32_t>(latitude_offset), static_cast<uint32_t>(longitude_offset));
  return true;
}

bool decode(Range longitude_range, Range latitude_range, HashBits hash, Area* out) {
  if (hash.is_zero()) return false;
  if (latitude_range.min == 0 && latitude_range.max == 0) return false;
  if (longitude_range.min == 0 && longitude_range.max == 0) return false;
  const uint32_t latitude_index = static_cast<uint32_t>(gather_bits(hash.bits));
  const uint32_t longitude_index = static_cast<uint32_t>(gather_bits(hash.bits >> 1));
  const double latitude_scale = latitude_range.max - latitude_range.min;
  const double longitude_scale = longitude_range.max - longitude_range.min;
  const double cells = static_cast<double>(uint64_t{1} << hash.step);
  // The index + 1 is computed in 32 bits and wraps, as Redis's does, for the out-of-grid
  // indexes that odd ZADD scores produce.
  const uint32_t latitude_next = latitude_index + 1;
  const uint32_t longitude_next = longitude_index + 1;
  out->latitude.min = latitude_range.min + (latitude_index * 1.0 / cells) * latitude_scale;
  out->latitude.max = latitude_range.min + (latitude_next * 1.0 / cells) * latitude_scale;
  out->longitude.min = longitude_range.min + (longitude_index * 1.0 / cells) * longitude_scale;
  out->longitude.max = longitude_range.min + (longitude_next * 1.0 / cells) * longitude_scale;
  return true;
}

uint64_t score_of(double longitude, double latitude) {
  HashBits hash;
  encode(kLongitudeRange, kLatitudeRange, longitude, latitude, kStepMax, &hash);
  return align52(hash);
}

uint64_t bits_of_score(double score) {
  // The compiler's unsigned conversion: below 2^63 a signed truncation; from 2^63 on, the
  // truncation of score - 2^63 with the top bit flipped.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (score >= kTwoTo63) return truncate_to_int64_bits(score - kTwoTo63) ^ (uint64_t{1} << 63);
  return truncate_to_int64_bits(score);
}

void position_of_score(double score, double* longitude, double* latitude) {
  Area area;
  decode(kLongitudeRange, kLatitudeRange, HashBits{bits_of_score(score), kStepMax}, &area);
  double x = (area.longitude.min + area.longitude.max) / 2;
  if (x > kLongitudeMax) x = kLongitudeMax;
  if (x < kLongitudeMin) x = kLongitudeMin;
  double y = (area.latitude.min + area.latitude.max) / 2;
  if (y > kLatitudeMax) y = kLatitudeMax;
  if (y < kLatitudeMin) y = kLatitudeMin;
  *longitude = x;
  *latitude = y;
}

Neighbors neighbors_of(HashBits hash) {
  Neighbors n;
  n.east = move(hash, true, 1);
  n.west = move(hash, true, -1);
  n.south = move(hash, false, -1);
  n.north = move(hash, false, 1);
  n.north_west = move(move(hash, true, -1), false, 1);
  n.north_east = move(move(hash, true, 1), false, 1);
  n.south_east = move(move(hash, true, 1), false, -1);
  n.south_west = move(move(hash, true, -1), false, -1);
  return n;
}

double latitude_distance(double latitude1, double latitude2) {
  return kEarthRadiusMeters * std::fabs(to_radians(latitude2) - to_radians(latitude1));
}

double distance(double longitude1, double latitude1, double longitude2, double latitude2) {
  const double lon1 = to_radians(longitude1);
  const double lon2 = to_radians(longitude2);
  const double v = std::sin((lon2 - lon1) / 2);
  // On one meridian the haversine reduces to the latitude arc; Redis 7.0.15 takes that
  // shortcut, and its rounding differs from the full formula's in the last bits.
  if (v == 0.0) return latitude_distance(latitude1, latitude2);
  const double lat1 = to_radians(latitude1);
  const double lat2 = to_radians(latitude2);
  const double u = std::sin((lat2 - lat1) / 2);
  const double a = u * u + std::cos(lat1) * std::cos(lat2) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool distance_if_in_box(double width_m, double height_m, double longitude1, double latitude1,
                        double longitude2, double latitude2, double* distance_out) {
  // The latitude arc first (cheap), then the distance along the point's parallel to the
  // centre's meridian; the great-circle distance only for a point inside.
  if (latitude_distance(latitude2, latitude1) > height_m / 2) return false;
  if (distance(longitude2, latitude2, longitude1, latitude2) > width_m / 2) return false;
  *distance_out = distance(longitude1, latitude1, longitude2, latitude2);
  return true;
}

uint8_t estimate_steps_by_radius(double radius_meters, double latitude) {
  if (radius_meters == 0) return kStepMax;
  int step = 1;
  while (radius_meters < kMercatorMax) {
    radius_meters *= 2;
    ++step;
  }
  // Two steps coarser than the cell that just fits the radius, so that the centre's cell and
  // its neighbours cover the area in most cases (the caller checks the rest).
  step -= 2;
  // Meridians converge towards the poles: a longitude span covers fewer metres there.
  if (latitude > 66 || latitude < -66) {
    --step;
    if (latitude > 80 || latitude < -80) --step;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return static_cast<uint8_t>(step);
}

bool Shape::contains(double point_longitude, double point_latitude, double* distance_meters) const {
  if (kind == Kind::kCircle) {
    *distance_meters = distance(longitude, latitude, point_longitude, point_latitude);
    return !(*distance_meters > radius * conversion);
  }
  return distance_if_in_box(width * conversion, height * conversion, longitude, latitude,
                            point_longitude, point_latitude, distance_meters);
}

std::array<double, 4> bounding_box(const Shape& shape) {
  // Half extents in metres.
  const bool circle = shape.kind == Shape::Kind::kCircle;
  const double height = shape.conversion * (circle ? shape.radius : shape.height / 2);
  const double width = shape.conversion * (circle ? shape.radius : shape.width / 2);
  const double latitude_delta = to_degrees(height / kEarthRadiusMeters);
  // A parallel is shorter the nearer the pole, so the box's edge nearer the pole spans more
  // longitude: the top edge in the north, the bottom one in the south.
  const double longitude_delta_top = to_degrees(
      width / kEarthRadiusMeters / std::cos(to_radians(shape.latitude + latitude_delta)));
  const double longitude_delta_bottom = to_degrees(
      width / kEarthRadiusMeters / std::cos(to_radians(shape.latitude - latitude_delta)));
  const bool southern = shape.latitude < 0;
  const double longitude_delta = southern ? longitude_delta_bottom : longitude_delta_top;
  return {shape.longitude - longitude_delta, shape.latitude - latitude_delta,
          shape.longitude + longitude_delta, shape.latitude + latitude_delta};
}

std::array<HashBits, 9> search_cells(const Shape& shape) {
  const auto [min_longitude, min_latitude, max_longitude, max_latitude] = bounding_box(shape);
  // A box is searched like the circle through its corners.
  double radius_meters = shape.kind == Shape::Kind::kCircle
                             ? shape.radius
                             : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                         (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.conversion;

  uint8_t steps = estimate_steps_by_radius(radius_meters, shape.latitude);
  HashBits hash;
  encode(kLongitudeRange, kLatitudeRange, shape.longitude, shape.latitude, steps, &hash);
  Neighbors around = neighbors_of(hash);
  Area area;
  decode(kLongitudeRange, kLatitudeRange, hash, &area);

  // Near the edge of its cell, the centre's neighbours may not reach the whole area: then one
  // step coarser.
  bool decrease_step = false;
  {
    Area north, south, east, west;
    decode(kLongitudeRange, kLatitudeRange, around.north, &north);
    decode(kLongitudeRange, kLatitudeRange, around.south, &south);
    decode(kLongitudeRange, kLatitudeRange, around.east, &east);
    decode(kLongitudeRange, kLatitudeRange, around.west, &west);
    if (north.latitude.max < max_latitude) decrease_step = true;
    if (south.latitude.min > min_latitude) decrease_step = true;
    if (east.longitude.max < max_longitude) decrease_step = true;
    if (west.longitude.min > min_longitude) decrease_step = true;
  }
  if (steps > 1 && decrease_step) {
    --steps;
    encode(kLongitudeRange, kLatitudeRange, shape.longitude, shape.latitude, steps, &hash);
    around = neighbors_of(hash);
    decode(kLongitudeRange, kLatitudeRange, hash, &area);
  }

  // Neighbours on a side the area does not reach cannot hold a match.
  if (steps >= 2) {
    if (area.latitude.min < min_latitude) {
      around.south = around.south_west = around.south_east = HashBits{};
    }
    if (area.latitude.max > max_latitude) {
      around.north = around.north_east = around.north_west = HashBits{};
    }
    if (area.longitude.min < min_longitude) {
      around.west = around.south_west = around.north_west = HashBits{};
    }
    if (area.longitude.max > max_longitude) {
      around.east = around.south_east = around.north_east = HashBits{};
    }
  }
  return {hash,
          around.north,
          around.south,
          around.east,
          around.west,
          around.north_east,
          around.north_west,
          around.south_east,
          around.south_west};
}

std::array<char, 11> standard_geohash(double longitude, double latitude) {
  static constexpr std::string_view kAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz";
  HashBits hash;
  encode(kLongitudeRange, kStandardLatitudeRange, longitude, latitude, kStepMax, &hash);
  std::array<char, 11> text;
  for (int i = 0; i < 10; ++i) {
    text[i] = kAlphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1f];
  }
  text[10] = kAlphabet[0];
  return text;
}

}  // namespace keywarden::geo
