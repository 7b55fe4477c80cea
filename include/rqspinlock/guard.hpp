// SPDX-License-Identifier: MIT
/*
 * rqspinlock/guard.hpp: scoped holders of an rqspinlock for C++11 and newer
 * (header only; link the C library as usual).
 *
 *   #include <rqspinlock/guard.hpp>
 *
 *   res_spin_guard g(lock);     // res_spin_lock(&lock); never throws
 *   if (!g)
 *           return g.error();      // -EDEADLK, -ETIMEDOUT or -EINVAL: NOT held
 *   ... critical section; the destructor unlocks ...
 *
 * Error policy. res_spin_lock() can fail, and a caller that goes on without
 * the lock corrupts what it protects, so every holder here makes the failure
 * impossible to miss:
 * - res_spin_guard, res_spin_irqsave_guard: return. The constructor never throws; the guard
 *   tests false and error() is the negative errno. The destructor unlocks
 *   only a lock it holds. Usable where exceptions are not (signal handlers:
 *   the constructors and destructors are async-signal-safe as the C calls
 *   are; code built with -fno-exceptions).
 * - res_spin_lockable: throw. A BasicLockable/Lockable view of a lock for the standard
 *   holders (std::lock_guard, std::unique_lock, std::scoped_lock): lock()
 *   throws std::system_error whose code() is the std::generic_category()
 *   value of the errno (std::errc::resource_deadlock_would_occur,
 *   std::errc::timed_out, std::errc::invalid_argument); try_lock() returns
 *   false when the lock is taken. Not in signal handlers; absent where
 *   exceptions are disabled.
 *
 * Man page: rqspinlock(3), "C++".
 */
#ifndef RQSPINLOCK_GUARD_HPP
#define RQSPINLOCK_GUARD_HPP

#ifndef __cplusplus
#error "rqspinlock/guard.hpp is a C++ header; C code calls res_spin_lock() itself"
#endif

#include <rqspinlock.h>

#include <cerrno>
#include <csignal>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <system_error>
#define RQSPINLOCK_GUARD_THROWS 1
#endif

/* Tag: take the lock with res_spin_trylock() (error() is -EBUSY when it is
 * taken). The standard's std::try_to_lock would pull in <mutex>. */
struct res_spin_try_to_lock_t {
	explicit res_spin_try_to_lock_t() = default;
};
constexpr res_spin_try_to_lock_t res_spin_try_to_lock{};

/* What both guards share: the lock they hold, if any, and the attempt's
 * result. */
class res_spin_guard_base
{
      public:
	bool owns_lock() const noexcept
	{
		return lock_ != nullptr && err_ == 0;
	}
	explicit operator bool() const noexcept
	{
		return owns_lock();
	}
	/* 0 when the lock was taken (even if since released), else the
	 * negative errno of the attempt. */
	int error() const noexcept
	{
		return err_;
	}

      protected:
	res_spin_guard_base(rqspinlock_t *lock, int err) noexcept : lock_(lock), err_(err)
	{
	}
	~res_spin_guard_base() = default;
	res_spin_guard_base(const res_spin_guard_base &) = delete;
	res_spin_guard_base &operator=(const res_spin_guard_base &) = delete;
	/* The lock to release now, if held; nullptr then and after. */
	rqspinlock_t *release() noexcept
	{
		rqspinlock_t *held = owns_lock() ? lock_ : nullptr;

		lock_ = nullptr;
		return held;
	}

	rqspinlock_t *lock_;
	int err_;
};

/* Holds `lock` from construction to destruction or unlock(), when
 * res_spin_lock() succeeded. Movable (a function may return one), not
 * copyable. */
class res_spin_guard : public res_spin_guard_base
{
      public:
	explicit res_spin_guard(rqspinlock_t &lock) noexcept
	    : res_spin_guard_base(&lock, res_spin_lock(&lock))
	{
	}
	res_spin_guard(rqspinlock_t &lock, res_spin_try_to_lock_t) noexcept
	    : res_spin_guard_base(&lock, res_spin_trylock(&lock))
	{
	}
	res_spin_guard(res_spin_guard &&other) noexcept
	    : res_spin_guard_base(other.lock_, other.err_)
	{
		other.lock_ = nullptr;
	}
	res_spin_guard(const res_spin_guard &) = delete;
	res_spin_guard &operator=(const res_spin_guard &) = delete;
	res_spin_guard &operator=(res_spin_guard &&) = delete;
	~res_spin_guard()
	{
		unlock();
	}

	/* Releases the lock now, if held; later calls do nothing. */
	void unlock() noexcept
	{
		rqspinlock_t *held = release();

		if (held)
			res_spin_unlock(held);
	}
};

#ifdef SIG_BLOCK
/* As res_spin_guard, with res_spin_lock_irqsave(): maskable signals are
 * blocked while the lock is held and the mask is restored at unlock (on
 * failure it was never changed). Not movable: the saved mask belongs to
 * this thread. */
class res_spin_irqsave_guard : public res_spin_guard_base
{
      public:
	explicit res_spin_irqsave_guard(rqspinlock_t &lock) noexcept
	    : res_spin_guard_base(&lock, 0), flags_()
	{
		err_ = res_spin_lock_irqsave(&lock, &flags_);
	}
	res_spin_irqsave_guard(const res_spin_irqsave_guard &) = delete;
	res_spin_irqsave_guard &operator=(const res_spin_irqsave_guard &) = delete;
	~res_spin_irqsave_guard()
	{
		unlock();
	}

	void unlock() noexcept
	{
		rqspinlock_t *held = release();

		if (held)
			res_spin_unlock_irqrestore(held, &flags_);
	}

      private:
	sigset_t flags_;
};
#endif /* SIG_BLOCK */

#ifdef RQSPINLOCK_GUARD_THROWS
/* The lock as the standard's Lockable: lock() throws std::system_error on
 * -EDEADLK, -ETIMEDOUT or -EINVAL (the lock is then not held). */
class res_spin_lockable
{
      public:
	explicit res_spin_lockable(rqspinlock_t &lock) noexcept : lock_(&lock)
	{
	}
	void lock()
	{
		int err = res_spin_lock(lock_);
		if (err)
			throw std::system_error(-err, std::generic_category(), "res_spin_lock");
	}
	bool try_lock() noexcept
	{
		return res_spin_trylock(lock_) == 0;
	}
	void unlock() noexcept
	{
		res_spin_unlock(lock_);
	}
	rqspinlock_t *native_handle() const noexcept
	{
		return lock_;
	}

      private:
	rqspinlock_t *lock_;
};
#endif /* RQSPINLOCK_GUARD_THROWS */

#endif /* RQSPINLOCK_GUARD_HPP */
