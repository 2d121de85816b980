// ctensor/cpp/workspace.hpp: ct::Workspace, an owned, growable ct_malloc scratch buffer for the NN ops.
#ifndef CTENSOR_CPP_WORKSPACE_HPP_
#define CTENSOR_CPP_WORKSPACE_HPP_

#include "dtype.hpp"
#include "error.hpp"

#include <cstddef>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Workspace: an owned scratch buffer                                        */
/* ------------------------------------------------------------------------ */

/** A move-only buffer of size() bytes on device(), from ct_malloc, freed
 *  with ct_free. reserve() grows it (to exactly the bytes asked; the old
 *  contents are not kept) and never shrinks it, so one Workspace passed to
 *  many calls ends at the largest size any of them needed. */
class Workspace {
 public:
  /** No buffer, on the CPU. */
  Workspace() noexcept : device_(cpu()), data_(nullptr), size_(0) {}
  /** @p bytes on @p device (no buffer when 0). */
  explicit Workspace(size_t bytes, CTDevice device = cpu())
      : device_(device), data_(nullptr), size_(0) {
    reserve(bytes);
  }
  /** Frees the buffer. */
  ~Workspace() { ct_free(device_, data_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  /** Takes the buffer; @p o becomes empty. */
  Workspace(Workspace&& o) noexcept : device_(o.device_), data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  /** Frees this buffer and takes @p o's; @p o becomes empty. */
  Workspace& operator=(Workspace&& o) noexcept {
    if (this != &o) {
      ct_free(device_, data_);
      device_ = o.device_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }

  /** Make size() at least @p bytes: a new buffer when it grows (the old one
   *  is freed only after the new allocation succeeded). */
  void reserve(size_t bytes) {
    if (bytes <= size_) return;
    void* p = nullptr;
    check(ct_malloc(device_, bytes, &p));
    ct_free(device_, data_);
    data_ = p;
    size_ = bytes;
  }
  /** Free the buffer (size() becomes 0; the device stays). */
  void clear() noexcept {
    ct_free(device_, data_);
    data_ = nullptr;
    size_ = 0;
  }
  /** The buffer (NULL when size() is 0). */
  void* data() const noexcept { return data_; }
  /** Its size in bytes. */
  size_t size() const noexcept { return size_; }
  /** Its device. */
  CTDevice device() const noexcept { return device_; }

 private:
  CTDevice device_;
  void* data_;
  size_t size_;
};

}  // namespace ct

#endif  // CTENSOR_CPP_WORKSPACE_HPP_
