import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { GuestReviewPage } from './GuestReviewPage';
import './review.css';

const container = document.getElementById('root');
if (!container) throw new Error('review.html has no #root element');

createRoot(container).render(
  <StrictMode>
    <GuestReviewPage />
  </StrictMode>,
);
